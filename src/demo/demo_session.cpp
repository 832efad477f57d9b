#include "demo/demo_session.h"

#include <algorithm>
#include <map>

#include "demo/demo_networks.h"
#include "judge/reference.h"
#include "node/node_factory.h"
#include "protocols/check.h"
#include "protocols/trace_text.h"
#include "sim/faults.h"

namespace hapair {

namespace {

using Json = OrderedJson;

const char* role_text(std::int64_t role) {
  if (role < 0 || role > static_cast<std::int64_t>(kLastRole)) return "unknown";
  return to_string(static_cast<Role>(role));
}

}  // namespace

struct DemoSession::InFlight {
  TimeUs sent_us = 0;
  TimeUs arrive_us = 0;
  NodeId from = kNoNode;
  NodeId to = kNoNode;
  const char* kind = "";
  std::size_t bytes = 0;
  std::size_t count = 0;  // tuples in a batch
  StreamId stream = kNoStream;
  TupleId first_id = 0;
  TupleId last_id = 0;
  bool replay = false;
};

std::unique_ptr<DemoSession> DemoSession::create(const DemoRunSpec& spec, std::string& error) {
  auto topology = demo_topology(spec.network, spec.ha, spec.seed, spec.duration_s);
  if (!topology) {
    error = "unknown network '" + spec.network + "'; the demo has:";
    for (const DemoNetwork& n : demo_networks()) error += " " + n.name;
    return nullptr;
  }
  topology->switches = spec.switches;
  const auto problems = validate(*topology);
  if (!problems.empty()) {
    error = topology->switches.empty() ? "the network does not validate: " + problems.front() : problems.front();
    return nullptr;
  }
  std::unique_ptr<DemoSession> s(new DemoSession());
  s->spec_ = spec;
  s->plan_ = std::make_shared<const Plan>(make_plan(*topology));
  const auto fault_problems = validate_faults(*s->plan_, spec.faults);
  if (!fault_problems.empty()) {
    error = fault_problems.front();
    return nullptr;
  }
  s->sim_ = s->make_sim(s->plan_, spec.faults);
  s->twin_ = std::make_unique<Simulator>(s->plan_, SimOptions{}, run_node_cores());
  s->reference_ = reference_run(*s->plan_).deliveries;
  s->classifier_ = std::make_unique<OutputClassifier>(s->reference_);
  return s;
}

DemoSession::~DemoSession() = default;

std::unique_ptr<Simulator> DemoSession::make_sim(std::shared_ptr<const Plan> plan, const std::vector<FaultSpec>& faults) {
  SimOptions options;
  options.faults = faults;
  options.on_send = [this](const SentMessage& m) { note_sent(m); };
  return std::make_unique<Simulator>(std::move(plan), std::move(options), run_node_cores());
}

std::string DemoSession::switchable_names() { return switchable_mode_names(ApproachCatalog::builtin()); }

std::vector<std::string> DemoSession::switch_approach(SwitchSpec change) {
  if (sim_->ended()) return {"the run has ended"};
  const TimeUs now = sim_->now_us();
  change.at_s = static_cast<double>(now + 1) / 1e6;
  change.where = "switch";
  DemoRunSpec spec = spec_;
  spec.switches.push_back(change);
  auto topology = demo_topology(spec.network, spec.ha, spec.seed, spec.duration_s);
  HAPAIR_CHECK(topology.has_value());  // the session was created from it
  topology->switches = spec.switches;
  const auto problems = validate(*topology);
  if (!problems.empty()) return problems;
  auto plan = std::make_shared<const Plan>(make_plan(*topology));
  // The messages in flight come again from the replay.
  in_flight_.clear();
  auto sim = make_sim(plan, spec.faults);
  sim->run_until(now);
  // The same run so far: the replay recorded what the page was shown, no more, no less.
  HAPAIR_CHECK_MSG(sim->now_us() == now && sim->events().size() == sim_->events().size() &&
                       sim->deliveries().size() == sim_->deliveries().size(),
                   "the replay up to a live switch at " << now << " us differs: " << sim->events().size() << " events and "
                                                        << sim->deliveries().size() << " deliveries, the run had "
                                                        << sim_->events().size() << " and " << sim_->deliveries().size());
  sim_ = std::move(sim);
  plan_ = std::move(plan);
  spec_ = std::move(spec);
  return {};
}

TimeUs DemoSession::now_us() const { return sim_->now_us(); }

Json DemoSession::meta() const {
  Json meta;
  meta["title"] = std::string(to_string(spec_.ha)) + " on the " + spec_.network + " network, seed " +
                  std::to_string(spec_.seed) + ", simulator";
  Json run;
  run["driver"] = "sim";
  run["ha"] = to_string(spec_.ha);
  run["network"] = spec_.network;
  run["seed"] = spec_.seed;
  run["duration_us"] = static_cast<TimeUs>(spec_.duration_s * 1e6);
  run["trace_level"] = "data";
  const Settings& s = plan_->settings();
  run["heartbeat_interval_ms"] = s.heartbeat_interval_ms;
  run["failure_timeout_ms"] = s.failure_timeout_ms;
  run["checkpoint_interval_ms"] = s.checkpoint_interval_ms;
  run["detector"] = to_string(s.detector);
  run["batch_tuples"] = s.batch_tuples;
  run["reference_tuples"] = reference_.size();
  meta["run"] = run;
  meta["fragments"] = fragments_json(*plan_);
  meta["nodes"] = nodes_json(*plan_);
  meta["streams"] = streams_json(*plan_);
  return meta;
}

void DemoSession::note_sent(const SentMessage& m) {
  if (m.dropped != sim::DropReason::none) return;  // never on the wire
  InFlight f;
  f.sent_us = m.at_us;
  f.arrive_us = m.arrival_us;
  f.from = m.from;
  f.to = m.to;
  f.kind = message_kind_name(m.envelope->body);
  f.bytes = m.bytes;
  if (const auto* b = std::get_if<TupleBatch>(&m.envelope->body)) {
    f.stream = b->stream;
    f.count = b->tuples.size();
    if (!b->tuples.empty()) {
      f.first_id = b->tuples.front().id;
      f.last_id = b->tuples.back().id;
    }
    f.replay = b->replay;
  }
  in_flight_.push_back(f);
}

Json DemoSession::advance(TimeUs to_us) {
  if (!sim_->ended()) {
    sim_->run_until(to_us);
    if (sim_->can_end()) sim_->run_until_quiet();
  }
  if (!twin_->ended()) twin_->run_until(sim_->ended() ? sim_->now_us() : to_us);
  if (sim_->ended() && !twin_->ended()) twin_->run_until_quiet();
  return answer();
}

Json DemoSession::step() {
  const TimeUs next = sim_->next_event_us();
  return advance(next == kNever ? sim_->now_us() : next);
}

std::vector<std::string> DemoSession::inject(FaultSpec fault) {
  // At the next microsecond: everything at `now` has been handled already.
  fault.at_s = static_cast<double>(sim_->now_us() + 1) / 1e6;
  if (sim_->ended()) return {"the run has ended"};
  auto problems = sim_->add_fault(fault);
  if (problems.empty()) spec_.faults.push_back(fault);  // a later switch's replay injects it too
  return problems;
}

Json DemoSession::answer() {
  const bool ended = sim_->ended();
  const TimeUs now = sim_->now_us();
  Json out;
  out["now_us"] = now;
  out["ended"] = ended;
  const TimeUs next = sim_->next_event_us();
  out["next_event_us"] = ended || next == kNever ? Json(nullptr) : Json(next);

  // Trace events, in time order, once none can come before them any more.
  const auto& events = sim_->events();
  pending_events_.insert(pending_events_.end(), events.begin() + static_cast<std::ptrdiff_t>(events_seen_), events.end());
  events_seen_ = events.size();
  std::stable_sort(pending_events_.begin(), pending_events_.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.at_us < b.at_us; });
  const TimeUs settled = ended ? kNever : sim_->settled_us();
  out["settled_us"] = ended ? now : std::min(settled, now);
  Json event_list = Json::array();
  std::size_t emitted = 0;
  for (; emitted < pending_events_.size() && pending_events_[emitted].at_us < settled; ++emitted) {
    const TraceEvent& e = pending_events_[emitted];
    if (e.kind == TraceKind::batch_sent) {
      TupleId& last = last_sent_[{e.node, e.stream()}];
      last = std::max(last, e.id_of(TraceKey::last_id));
    } else if (e.kind == TraceKind::trimmed) {
      trimmed_[{e.node, e.stream()}] = e.id_of(TraceKey::position);
    }
    event_list.push_back(trace_event_json(plan_.get(), e));
  }
  pending_events_.erase(pending_events_.begin(), pending_events_.begin() + static_cast<std::ptrdiff_t>(emitted));
  out["events"] = event_list;

  // Deliveries (recorded in time order), each with its status.
  const auto& deliveries = sim_->deliveries();
  Json outputs = Json::array();
  for (; deliveries_seen_ < deliveries.size(); ++deliveries_seen_) {
    const Delivery& d = deliveries[deliveries_seen_];
    outputs.push_back(delivery_json(*plan_, d, to_string(classifier_->add(d))));
  }
  out["outputs"] = outputs;

  // Reference tuples come due when the failure-free twin delivers them.
  const auto& twin = twin_->deliveries();
  for (; twin_seen_ < twin.size(); ++twin_seen_) {
    const Delivery& d = twin[twin_seen_];
    const EntryKey k = entry_key(d);
    auto it = twin_copies_.find(k);
    const std::uint64_t copy = (it == twin_copies_.end() ? 0 : it->second) + 1;
    twin_copies_[k] = copy;
    if (copy <= classifier_->in_reference(d)) due_.push_back(Due{d.at_us, copy, d});
  }
  Json missing = Json::array();
  std::vector<Due> still;
  for (Due& d : due_) {
    if (classifier_->delivered(d.tuple) >= d.copy) continue;  // it came
    if (!ended && now < d.due_us + kMissingGraceUs) {
      still.push_back(std::move(d));
      continue;
    }
    ++reported_missing_[entry_key(d.tuple)];
    missing.push_back(missing_json(*plan_, d.tuple));
  }
  due_ = std::move(still);
  if (ended && !final_missing_done_) {
    // What the twin never delivered either (a Union's other interleaving), by the counts: of
    // each entry, the copies neither delivered nor reported yet.
    final_missing_done_ = true;
    std::map<EntryKey, std::int64_t> remaining;
    for (const Delivery& r : reference_) {
      const EntryKey k = entry_key(r);
      if (remaining.count(k)) continue;
      remaining[k] = static_cast<std::int64_t>(classifier_->in_reference(r)) -
                     static_cast<std::int64_t>(classifier_->delivered(r)) -
                     static_cast<std::int64_t>(reported_missing_[k]);
    }
    for (const Delivery& r : reference_) {
      std::int64_t& left = remaining[entry_key(r)];
      if (left <= 0) continue;
      --left;
      ++reported_missing_[entry_key(r)];
      missing.push_back(missing_json(*plan_, r));
    }
  }
  out["missing"] = missing;
  out["state"] = state_json();
  return out;
}

Json DemoSession::state_json() {
  const TimeUs now = sim_->now_us();
  Json nodes = Json::array();
  for (const PlanNode& pn : plan_->nodes) {
    Json n;
    n["name"] = pn.name;
    const bool crashed = sim_->crashed(pn.id);
    n["alive"] = !crashed;
    n["paused"] = sim_->paused(pn.id);
    const Metrics m = sim_->node_metrics(pn.name);
    auto metric = [&](const std::string& name) -> std::int64_t {
      auto it = m.find(name);
      return it == m.end() ? 0 : it->second;
    };
    n["role"] = crashed ? "dead" : role_text(metric("role"));
    // The epoch this node's fragment is in as the node knows it (a fenced or cut-off node may
    // still believe an older one: the highest epoch is the fragment's).
    n["epoch"] = metric("epoch");
    Json queues = Json::object(), trimmed = Json::object(), last = Json::object();
    // A node of no fragment (the coordinator of global checkpoints) has no output streams.
    const std::vector<StreamId> none;
    for (StreamId s : plan_->runs_fragment(pn.id) ? plan_->fragments[pn.fragment].outputs : none) {
      const std::string& stream = plan_->streams[s].name;
      queues[stream] = crashed ? 0 : metric("output_queue_tuples." + stream);
      auto t = trimmed_.find({pn.id, s});
      trimmed[stream] = t == trimmed_.end() ? 0 : t->second;
      auto l = last_sent_.find({pn.id, s});
      last[stream] = l == last_sent_.end() ? 0 : l->second;
    }
    n["output_queue"] = queues;
    n["input_queue"] = crashed ? 0 : metric("input_queue_tuples");
    n["trimmed_up_to"] = trimmed;
    n["last_id"] = last;
    nodes.push_back(n);
  }
  std::erase_if(in_flight_, [&](const InFlight& f) { return f.arrive_us <= now; });
  Json flying = Json::array();
  for (const InFlight& f : in_flight_) {
    Json j;
    j["from"] = trace_node_name(plan_.get(), f.from);
    j["to"] = trace_node_name(plan_.get(), f.to);
    j["kind"] = f.kind;
    j["sent_us"] = f.sent_us;
    j["arrive_us"] = f.arrive_us;
    j["bytes"] = f.bytes;
    if (f.stream != kNoStream) {
      j["stream"] = plan_->streams[f.stream].name;
      j["count"] = f.count;
      j["first_id"] = f.first_id;
      j["last_id"] = f.last_id;
      j["replay"] = f.replay;
    }
    flying.push_back(j);
  }
  Json state;
  state["nodes"] = nodes;
  state["in_flight"] = flying;
  return state;
}

}  // namespace hapair
