#include "report/timeline.h"

#include <map>
#include <optional>
#include <set>

#include "report/run_json.h"

namespace hapair {

namespace web {
extern const unsigned char kPage_timeline_timeline_html[];
extern const std::size_t kPage_timeline_timeline_html_size;
}  // namespace web

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kPlaceholder = "/*HAPAIR_RUN_JSON*/";

}  // namespace

Json timeline_data(const RunResult& result, const SemanticsReport& semantics, const std::vector<Delivery>& reference,
                   std::uint64_t seed, const std::string& version, const std::string& title) {
  static const Plan kNoPlan{};
  const Plan& plan = result.plan ? *result.plan : kNoPlan;
  Json data;
  data["format"] = "hapair-timeline/1";
  data["title"] = title;
  Json run;
  run["driver"] = result.driver;
  run["ha"] = result.plan ? to_string(plan.settings().ha) : "";
  run["network"] = result.plan ? plan.topology.name : "";
  run["seed"] = seed;
  run["version"] = version;
  run["duration_us"] = result.plan ? static_cast<TimeUs>(plan.settings().duration_s * 1e6) : 0;
  run["end_us"] = result.end_us;
  run["completed"] = result.completed;
  run["trace_level"] = result.plan ? to_string(plan.settings().trace_level) : "control";
  run["verdict"] = semantics.verdict;
  run["lost"] = semantics.lost;
  run["duplicates"] = semantics.duplicates;
  run["differing"] = semantics.differing;
  run["reference_tuples"] = semantics.reference_tuples;
  run["delivered_tuples"] = semantics.delivered_tuples;
  run["multiset_compare"] = semantics.multiset_compare;
  Json not_judged = Json::array();
  for (const NotJudged& n : semantics.not_judged) not_judged.push_back(n.stream);
  run["not_judged"] = not_judged;
  data["run"] = run;
  data["fragments"] = fragments_json(plan);
  data["nodes"] = nodes_json(plan);
  data["streams"] = streams_json(plan);
  data["faults"] = faults_json(plan, result.events);
  Json events = Json::array();
  for (const TraceEvent& e : result.events) events.push_back(trace_event_json(&plan, e));
  data["events"] = events;

  // Deliveries on judged streams, classified against the judged reference; the rest are not
  // judged (their reference depends on an interleaving the run did not report).
  std::set<std::string> unjudged;
  for (const NotJudged& n : semantics.not_judged) unjudged.insert(n.stream);
  std::vector<Delivery> judged;
  std::vector<std::size_t> judged_index;
  for (std::size_t i = 0; i < result.deliveries.size(); ++i) {
    if (unjudged.count(stream_text(plan, result.deliveries[i].stream))) continue;
    judged.push_back(result.deliveries[i]);
    judged_index.push_back(i);
  }
  const OutputClassification c = classify_output(reference, judged);
  std::vector<const char*> status(result.deliveries.size(), "not_judged");
  for (std::size_t k = 0; k < judged.size(); ++k) status[judged_index[k]] = to_string(c.status[k]);
  Json outputs = Json::array();
  for (std::size_t i = 0; i < result.deliveries.size(); ++i) outputs.push_back(delivery_json(plan, result.deliveries[i], status[i]));
  data["outputs"] = outputs;
  Json missing = Json::array();
  for (std::size_t i : c.missing) {
    const Delivery& d = reference[i];
    missing.push_back(missing_json(plan, d));
  }
  data["missing"] = missing;
  return data;
}

std::string_view timeline_template() {
  return {reinterpret_cast<const char*>(web::kPage_timeline_timeline_html), web::kPage_timeline_timeline_html_size};
}

std::string timeline_html(const Json& data) {
  std::string json = data.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Inside <script> "</" ends the script and "<!--" changes how it is parsed; '<' appears only
  // inside JSON strings, where \u003c means the same character.
  std::string safe;
  safe.reserve(json.size());
  for (char ch : json) {
    if (ch == '<') safe += "\\u003c";
    else safe += ch;
  }
  std::string page(timeline_template());
  const auto at = page.find(kPlaceholder);
  if (at == std::string::npos) return page;
  page.replace(at, kPlaceholder.size(), safe);
  return page;
}

}  // namespace hapair
