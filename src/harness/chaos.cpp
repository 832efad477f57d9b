// Running the fault campaign (`hapair chaos`): one case in this process (run_once, the optional
// tamper, the verdict on the judged streams, the classification), one case isolated in a forked
// child that answers in JSON, and the campaign loop that writes chaos.csv and chaos.txt.
//
// Paper: Hwang et al. (ICDE 2005), section 3: each run checks one approach's recovery type
// against its failure-free reference.
//
// Invariant: an isolated child that aborts, hangs past run_timeout_s or answers unreadably is
// that run's violation, never the end of the campaign; the parent keeps the case, the child
// only sends the run's result fields.
#include "harness/chaos.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/child_process.h"
#include "harness/csv.h"
#include "harness/disturbance.h"
#include "harness/reference.h"
#include "harness/topology_file.h"
#include "protocols/check.h"
#include "harness/guarantee.h"

namespace hapair {
namespace {

// ---- isolation: one run in a forked child --------------------------------------------------

// The child's answer is chaos_run_json(); its stderr (the last bytes) says why a run died.

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

ChaosRun died(const ChaosCase& c, const std::string& what) {
  ChaosRun r;
  r.c = c;
  r.verdict = "none";
  r.klass = ChaosClass::violation;
  r.reason = what;
  return r;
}

ChaosRun run_isolated(const ChaosOptions& options, const ChaosCase& c) {
  int result_pipe[2];
  int error_pipe[2];
  HAPAIR_CHECK_MSG(::pipe2(result_pipe, O_CLOEXEC) == 0, "pipe2: " << std::strerror(errno));
  HAPAIR_CHECK_MSG(::pipe2(error_pipe, O_CLOEXEC) == 0, "pipe2: " << std::strerror(errno));
  std::string fork_error;
  const pid_t parent = ::getpid();
  ChildProcess child = ChildProcess::fork_call(
      [&] {
        // The case dies with the campaign (kill -9 of `hapair chaos`), and its nodes with it.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) return 1;
        ::close(result_pipe[0]);
        ::close(error_pipe[0]);
        ::dup2(error_pipe[1], STDERR_FILENO);
        write_all(result_pipe[1], chaos_run_json(run_chaos_case(options, c)));
        return 0;
      },
      fork_error);
  HAPAIR_CHECK_MSG(child.running(), fork_error);
  ::close(result_pipe[1]);
  ::close(error_pipe[1]);
  std::string answer, errors;
  bool answer_done = false, errors_done = false, hung = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.run_timeout_s);
  // Until the child closed its answer pipe (it does so by exiting); its stderr is kept (the last
  // bytes) to say why a run died.
  while (!answer_done) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      hung = true;
      break;
    }
    pollfd fds[2] = {{result_pipe[0], POLLIN, 0}, {error_pipe[0], static_cast<short>(errors_done ? 0 : POLLIN), 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    char buf[4096];
    if (fds[0].revents != 0) {
      const ssize_t n = ::read(result_pipe[0], buf, sizeof buf);
      if (n > 0) answer.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) answer_done = true;
    }
    if (!errors_done && fds[1].revents != 0) {
      const ssize_t n = ::read(error_pipe[0], buf, sizeof buf);
      if (n > 0) {
        errors.append(buf, static_cast<std::size_t>(n));
        if (errors.size() > 8192) errors.erase(0, errors.size() - 4096);
      } else if (n == 0 || errno != EINTR) {
        errors_done = true;
      }
    }
  }
  const std::optional<ChildExit> exit = hung ? child.kill_and_wait() : child.wait();
  ::close(result_pipe[0]);
  ::close(error_pipe[0]);
  if (hung)
    return died(c, "the run hung: no answer after " + shortest_text(options.run_timeout_s) + " s of wall-clock time");
  ChaosRun r;
  r.c = c;
  const std::string bad_answer = exit && exit->clean() ? read_chaos_run_json(answer, r) : std::string();
  if (!exit || !exit->clean() || !bad_answer.empty()) {
    std::string what = "the run died: " + (exit ? exit->describe() : std::string("its end was not seen"));
    if (!bad_answer.empty()) what += ", and its answer was unreadable (" + bad_answer + ")";
    const std::string last = last_line(errors);
    if (!last.empty()) what += ": " + last;
    return died(c, what);
  }
  return r;
}

}  // namespace

// ---- the campaign ------------------------------------------------------------------------

std::size_t ChaosReport::violations() const {
  return static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [](const ChaosRun& r) { return r.klass == ChaosClass::violation; }));
}

ChaosRun run_chaos_case(const ChaosOptions& options, const ChaosCase& c) {
  auto plan = std::make_shared<const Plan>(make_plan(c.topology));
  const Reference reference = compute_reference(*plan);
  RunRequest request;
  request.driver = options.driver;
  request.faults = c.faults;
  request.hapair_binary = options.hapair_binary;
  if (options.only_case && !options.out_dir.empty())
    request.out_dir = options.out_dir + "/case-" + std::to_string(c.index);
  RunOutcome outcome = run_once(plan, request, reference);
  if (options.tamper) options.tamper(c, outcome);
  ChaosRun r;
  r.c = c;
  // The verdict on the streams that can be judged (all of them, unless a Union's merge order is
  // unknown), again after a tamper changed the outcome.
  const SemanticsReport s = options.tamper ? judge_run(judge_against(*plan, reference, outcome.result), reference)
                                           : outcome.semantics;
  for (const NotJudged& n : s.not_judged) r.unjudged.push_back(n.stream);
  if (!s.not_judged.empty()) r.unjudged_reason = s.not_judged.front().reason;
  r.verdict = s.verdict;
  r.lost = s.lost;
  r.duplicates = s.duplicates;
  r.differing = s.differing;
  r.delivered = s.delivered_tuples;
  r.reference = s.reference_tuples;
  r.completed = outcome.result.completed;
  if (!outcome.result.errors.empty()) r.first_error = outcome.result.errors.front();
  for (const auto& e : outcome.result.events) r.takeovers += e.kind == TraceKind::takeover;
  if (outcome.metrics.recovery) r.restore_ms = outcome.metrics.recovery->restore_ms;
  r.disturbed = outcome.metrics.disturbance.disturbed();
  r.disturbance = describe_disturbances(outcome.metrics.disturbance);
  std::map<std::string, std::size_t> detectors;
  for (const DetectionSeen& d : outcome.metrics.disturbance.detections) ++detectors[d.detector];
  for (const auto& [name, n] : detectors)
    r.detectors += (r.detectors.empty() ? "" : " ") + name + "=" + std::to_string(n);
  const ChaosJudgement j =
      classify_chaos_run(c.approach, c.topology.settings.determinants, !reference.arbitrary_operators.empty(), s,
                         outcome.result.completed, outcome.result.errors, beyond_guarantee(*plan, outcome.result));
  r.klass = j.klass;
  r.reason = j.reason;
  // A failure of a node, a driver or the harness (anything but the line that says the output
  // stopped) is a violation whatever the approach promised, ha none and beyond included.
  const std::vector<std::string> failures = harness_errors(outcome.result);
  if (r.klass != ChaosClass::violation && !failures.empty()) {
    r.klass = ChaosClass::violation;
    r.reason = "the harness failed: " + failures.front();
  }
  return r;
}

std::string chaos_run_json(const ChaosRun& r) {
  nlohmann::ordered_json j;
  j["verdict"] = r.verdict;
  j["lost"] = r.lost;
  j["duplicates"] = r.duplicates;
  j["differing"] = r.differing;
  j["delivered"] = r.delivered;
  j["reference"] = r.reference;
  j["unjudged"] = r.unjudged;
  j["unjudged_reason"] = r.unjudged_reason;
  j["completed"] = r.completed;
  j["first_error"] = r.first_error;
  j["takeovers"] = r.takeovers;
  j["restore_ms"] = r.restore_ms ? nlohmann::ordered_json(*r.restore_ms) : nlohmann::ordered_json(nullptr);
  j["disturbed"] = r.disturbed;
  j["disturbance"] = r.disturbance;
  j["detectors"] = r.detectors;
  j["class"] = to_string(r.klass);
  j["reason"] = r.reason;
  return j.dump();
}

std::string read_chaos_run_json(const std::string& text, ChaosRun& r) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return "not JSON";
  if (!j.is_object()) return "not a JSON object";
  // Each field present with its type, or the name of the first that is not.
  std::string wrong;
  auto get = [&](const char* key, auto& out) {
    using T = std::decay_t<decltype(out)>;
    const auto it = j.find(key);
    bool ok = it != j.end();
    if (ok) {
      if constexpr (std::is_same_v<T, bool>) ok = it->is_boolean();
      else if constexpr (std::is_same_v<T, std::string>) ok = it->is_string();
      else if constexpr (std::is_integral_v<T>) ok = it->is_number_unsigned() || (it->is_number_integer() && *it >= 0);
      else if constexpr (std::is_same_v<T, std::vector<std::string>>)
        ok = it->is_array() && std::all_of(it->begin(), it->end(), [](const auto& e) { return e.is_string(); });
      else if constexpr (std::is_same_v<T, std::optional<double>>) ok = it->is_null() || it->is_number();
    }
    if (!ok) {
      if (wrong.empty()) wrong = std::string("field ") + key + (it == j.end() ? " missing" : " of the wrong type");
      return;
    }
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      out = it->is_null() ? std::nullopt : std::optional<double>(it->template get<double>());
    } else {
      out = it->template get<T>();
    }
  };
  ChaosRun got = r;
  std::string klass;
  get("verdict", got.verdict);
  get("lost", got.lost);
  get("duplicates", got.duplicates);
  get("differing", got.differing);
  get("delivered", got.delivered);
  get("reference", got.reference);
  get("unjudged", got.unjudged);
  get("unjudged_reason", got.unjudged_reason);
  get("completed", got.completed);
  get("first_error", got.first_error);
  get("takeovers", got.takeovers);
  get("restore_ms", got.restore_ms);
  get("disturbed", got.disturbed);
  get("disturbance", got.disturbance);
  get("detectors", got.detectors);
  get("class", klass);
  get("reason", got.reason);
  if (!wrong.empty()) return wrong;
  bool known = false;
  for (ChaosClass k : {ChaosClass::ok, ChaosClass::beyond, ChaosClass::violation}) {
    if (klass == to_string(k)) {
      got.klass = k;
      known = true;
    }
  }
  if (!known) return "unknown class " + klass;
  r = std::move(got);
  return {};
}

ChaosReport run_chaos(const ChaosOptions& options) {
  ChaosReport report;
  report.options = options;
  report.problems = validate_chaos_options(options);
  if (!report.problems.empty()) return report;
  const auto networks = load_chaos_networks(options, report.problems);
  if (!report.problems.empty()) return report;

  std::vector<std::size_t> indexes;
  if (options.only_case) indexes.push_back(*options.only_case);
  else
    for (std::size_t i = 0; i < options.runs; ++i) indexes.push_back(i);
  if (options.jobs <= 1) {
    for (std::size_t k = 0; k < indexes.size(); ++k) {
      const ChaosCase c = chaos_case(options, networks, indexes[k]);
      if (options.on_case) options.on_case(k, indexes.size(), c);
      ChaosRun r = options.isolate ? run_isolated(options, c) : run_chaos_case(options, c);
      if (options.on_run) options.on_run(r);
      report.runs.push_back(std::move(r));
    }
  } else {
    // `jobs` threads, each waiting for one forked child at a time (validate_chaos_options made
    // sure runs are isolated): the work is in the children, the threads only wait and collect.
    std::vector<ChaosCase> cases;
    for (std::size_t index : indexes) cases.push_back(chaos_case(options, networks, index));
    std::vector<std::optional<ChaosRun>> runs(cases.size());
    std::mutex hooks;
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      for (std::size_t k; (k = next++) < cases.size();) {
        {
          std::lock_guard<std::mutex> lock(hooks);
          if (options.on_case) options.on_case(k, cases.size(), cases[k]);
        }
        ChaosRun r = run_isolated(options, cases[k]);
        std::lock_guard<std::mutex> lock(hooks);
        if (options.on_run) options.on_run(r);
        runs[k] = std::move(r);
      }
    };
    std::vector<std::thread> threads;
    for (std::size_t j = 0; j < std::min(options.jobs, cases.size()); ++j) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    for (auto& r : runs) report.runs.push_back(std::move(*r));
  }

  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir + "/cases", ec);
    // The topology of every violating case, so that `hapair run --topology` can repeat it.
    for (const auto& r : report.runs)
      if (r.klass == ChaosClass::violation)
        std::ofstream(options.out_dir + "/cases/case-" + std::to_string(r.c.index) + ".toml") << write_topology(r.c.topology);
    std::ofstream(options.out_dir + "/chaos.csv") << chaos_csv(report);
    std::ofstream(options.out_dir + "/chaos.txt") << chaos_table(report);
  }
  return report;
}

}  // namespace hapair
