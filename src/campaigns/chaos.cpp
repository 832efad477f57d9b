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
#include "campaigns/chaos.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include <nlohmann/json.hpp>

#include "proc/child_process.h"
#include "report/csv.h"
#include "judge/disturbance.h"
#include "judge/reference.h"
#include "config/topology_file.h"
#include "protocols/check.h"
#include "run/guarantee.h"

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
  r.klass = GuaranteeClass::violation;
  r.reason = what;
  return r;
}

// One case running in a forked child. Children are forked and watched from one thread only:
// a fork while another thread of the campaign holds a lock (the allocator's: AddressSanitizer's
// deadlocked that way with --jobs) would leave the child waiting for it forever.
struct IsolatedRun {
  ChaosCase c;
  ChildProcess child;
  int result_fd = -1;
  int error_fd = -1;
  std::string answer, errors;
  bool answer_done = false, errors_done = false;
  std::chrono::steady_clock::time_point deadline;
};

std::unique_ptr<IsolatedRun> start_isolated(const ChaosOptions& options, const ChaosCase& c) {
  int result_pipe[2];
  int error_pipe[2];
  HAPAIR_CHECK_MSG(::pipe2(result_pipe, O_CLOEXEC) == 0, "pipe2: " << std::strerror(errno));
  HAPAIR_CHECK_MSG(::pipe2(error_pipe, O_CLOEXEC) == 0, "pipe2: " << std::strerror(errno));
  std::string fork_error;
  const pid_t parent = ::getpid();
  auto run = std::make_unique<IsolatedRun>();
  run->c = c;
  run->child = ChildProcess::fork_call(
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
  HAPAIR_CHECK_MSG(run->child.running(), fork_error);
  ::close(result_pipe[1]);
  ::close(error_pipe[1]);
  run->result_fd = result_pipe[0];
  run->error_fd = error_pipe[0];
  run->deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(options.run_timeout_s));
  return run;
}

// Reads what a child's pipes hold after poll(2) said so (`result_events`, `error_events`): its
// answer until it closes the pipe (it does so by exiting), and the last bytes of its stderr, kept
// to say why a run died.
void read_isolated(IsolatedRun& run, short result_events, short error_events) {
  char buf[4096];
  if (result_events != 0) {
    const ssize_t n = ::read(run.result_fd, buf, sizeof buf);
    if (n > 0) run.answer.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR) run.answer_done = true;
  }
  if (!run.errors_done && error_events != 0) {
    const ssize_t n = ::read(run.error_fd, buf, sizeof buf);
    if (n > 0) {
      run.errors.append(buf, static_cast<std::size_t>(n));
      if (run.errors.size() > 8192) run.errors.erase(0, run.errors.size() - 4096);
    } else if (n == 0 || errno != EINTR) {
      run.errors_done = true;
    }
  }
}

// The run's result once it answered, or once it `hung` (then it is killed).
ChaosRun finish_isolated(const ChaosOptions& options, IsolatedRun& run, bool hung) {
  const std::optional<ChildExit> exit = hung ? run.child.kill_and_wait() : run.child.wait();
  ::close(run.result_fd);
  ::close(run.error_fd);
  const ChaosCase& c = run.c;
  if (hung)
    return died(c, "the run hung: no answer after " + shortest_text(options.run_timeout_s) + " s of wall-clock time");
  ChaosRun r;
  r.c = c;
  const std::string bad_answer = exit && exit->clean() ? read_chaos_run_json(run.answer, r) : std::string();
  if (!exit || !exit->clean() || !bad_answer.empty()) {
    std::string what = "the run died: " + (exit ? exit->describe() : std::string("its end was not seen"));
    if (!bad_answer.empty()) what += ", and its answer was unreadable (" + bad_answer + ")";
    const std::string last = last_line(run.errors);
    if (!last.empty()) what += ": " + last;
    return died(c, what);
  }
  return r;
}

// Runs cases 0 .. count-1 (`case_of(k)` draws case k, `started(k, c)` is told as it starts) in
// forked children, at most `jobs` at once, from this thread alone; `done(k, run)` is called as
// case k ends.
void run_isolated(const ChaosOptions& options, std::size_t count, std::size_t jobs,
                  const std::function<ChaosCase(std::size_t)>& case_of,
                  const std::function<void(std::size_t, const ChaosCase&)>& started,
                  const std::function<void(std::size_t, ChaosRun)>& done) {
  std::map<std::size_t, std::unique_ptr<IsolatedRun>> running;
  std::size_t next = 0;
  while (next < count || !running.empty()) {
    while (running.size() < std::max<std::size_t>(jobs, 1) && next < count) {
      const ChaosCase c = case_of(next);
      started(next, c);
      running[next] = start_isolated(options, c);
      ++next;
    }
    const auto now = std::chrono::steady_clock::now();
    long long wait_ms = 1000;
    std::vector<pollfd> fds;
    std::vector<std::size_t> owner;
    for (auto& [k, run] : running) {
      wait_ms = std::min<long long>(
          wait_ms, std::max<long long>(0, std::chrono::duration_cast<std::chrono::milliseconds>(run->deadline - now).count()));
      fds.push_back({run->result_fd, POLLIN, 0});
      fds.push_back({run->error_fd, static_cast<short>(run->errors_done ? 0 : POLLIN), 0});
      owner.push_back(k);
    }
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
    if (ready < 0 && errno == EINTR) continue;
    for (std::size_t i = 0; i < owner.size(); ++i) read_isolated(*running[owner[i]], fds[2 * i].revents, fds[2 * i + 1].revents);
    const auto after = std::chrono::steady_clock::now();
    for (auto it = running.begin(); it != running.end();) {
      IsolatedRun& run = *it->second;
      const bool hung = !run.answer_done && after >= run.deadline;
      if (run.answer_done || hung) {
        const std::size_t k = it->first;
        ChaosRun r = finish_isolated(options, run, hung);
        it = running.erase(it);
        done(k, std::move(r));
      } else {
        ++it;
      }
    }
  }
}

}  // namespace

// ---- the campaign ------------------------------------------------------------------------

std::size_t ChaosReport::violations() const {
  return static_cast<std::size_t>(
      std::count_if(runs.begin(), runs.end(), [](const ChaosRun& r) { return r.klass == GuaranteeClass::violation; }));
}

ChaosRun run_chaos_case(const ChaosOptions& options, const ChaosCase& c) {
  auto plan = std::make_shared<const Plan>(make_plan(c.topology));
  const Reference reference = compute_reference(*plan);
  RunRequest request;
  request.driver = options.driver;
  request.faults = c.faults;
  request.hapair_binary = options.hapair_binary;
  request.hosts = options.hosts;
  request.hosts.losses = c.host_losses;
  // A real campaign writes every run's files and keeps those of a violation in cases/case-N/
  // (trace, timeline, output): a real run's timing is not reproduced by its command every time.
  const bool keep_if_violation = !options.only_case && !options.out_dir.empty() && options.driver == "real";
  if (options.only_case && !options.out_dir.empty())
    request.out_dir = options.out_dir + "/case-" + std::to_string(c.index);
  else if (keep_if_violation)
    request.out_dir = options.out_dir + "/cases/case-" + std::to_string(c.index);
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
  // A case with live switches ran every approach its switches name: it is held to the least
  // promise among them (a switch to upstream backup on an arbitrary network: rollback).
  const ApproachTraits* judged = &plan->approaches.of(c.approach);
  for (const PlanSwitch& w : plan->switches)
    if (plan->approaches.of(w.to).promise < judged->promise) judged = &plan->approaches.of(w.to);
  const GuaranteeJudgement j =
      judge_guarantee(*judged, c.topology.settings.determinants,
                      !reference.arbitrary_operators.empty() || rebases_ids(*judged, c.topology.settings), s,
                         outcome.result.completed, outcome.result.errors, beyond_guarantee(*plan, outcome.result));
  r.klass = j.klass;
  r.reason = j.reason;
  // A failure of a node, a driver or the harness (anything but the line that says the output
  // stopped) is a violation whatever the approach promised, ha none and beyond included.
  const std::vector<std::string> failures = harness_errors(outcome.result);
  if (r.klass != GuaranteeClass::violation && !failures.empty()) {
    r.klass = GuaranteeClass::violation;
    r.reason = "the harness failed: " + failures.front();
  }
  if (keep_if_violation && r.klass != GuaranteeClass::violation) {
    std::error_code ec;
    std::filesystem::remove_all(request.out_dir, ec);
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
  for (GuaranteeClass k : {GuaranteeClass::ok, GuaranteeClass::beyond, GuaranteeClass::violation}) {
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
  if (!options.isolate) {
    for (std::size_t k = 0; k < indexes.size(); ++k) {
      const ChaosCase c = chaos_case(options, networks, indexes[k]);
      if (options.on_case) options.on_case(k, indexes.size(), c);
      ChaosRun r = run_chaos_case(options, c);
      if (options.on_run) options.on_run(r);
      report.runs.push_back(std::move(r));
    }
  } else {
    // Up to `jobs` forked children at once (validate_chaos_options allows more than one only in
    // the simulator), all started and watched from this thread; the report keeps case order.
    std::vector<std::optional<ChaosRun>> runs(indexes.size());
    run_isolated(
        options, indexes.size(), options.jobs, [&](std::size_t k) { return chaos_case(options, networks, indexes[k]); },
        [&](std::size_t k, const ChaosCase& c) {
          if (options.on_case) options.on_case(k, indexes.size(), c);
        },
        [&](std::size_t k, ChaosRun r) {
          if (options.on_run) options.on_run(r);
          runs[k] = std::move(r);
        });
    for (auto& r : runs) report.runs.push_back(std::move(*r));
  }

  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir + "/cases", ec);
    // The topology of every violating case, so that `hapair run --topology` can repeat it.
    for (const auto& r : report.runs)
      if (r.klass == GuaranteeClass::violation)
        std::ofstream(options.out_dir + "/cases/case-" + std::to_string(r.c.index) + ".toml") << write_topology(r.c.topology);
    std::ofstream(options.out_dir + "/chaos.csv") << chaos_csv(report);
    std::ofstream(options.out_dir + "/chaos.txt") << chaos_table(report);
  }
  return report;
}

}  // namespace hapair
