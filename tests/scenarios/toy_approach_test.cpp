// A new approach is one folder and one registration: this file is the folder. It writes a toy
// approach against the approach interface only (primary/approach.h for its two ends,
// protocols/approach_traits.h for what the rest of the system asks of it), registers it in a
// catalog and a registry of its own (ApproachCatalog::with, ApproachRegistry::with), and runs it
// end to end in the simulator: the plan names its standby, the judge holds it to its promise, and
// no file outside tests/ knows it exists.
//
// The toy is a cold standby: the primary does no HA work (it only counts its ticks, to show its
// end is called); the standby watches the primary and, when it fails, restarts the fragment from
// empty state and asks its upstreams only for new tuples (gap recovery, as amnesia).
#include <catch2/catch.hpp>

#include "judge/checker.h"
#include "judge/guarantee_rules.h"
#include "judge/reference.h"
#include "node/node_factory.h"
#include "primary/primary_role.h"
#include "primary/standby_role.h"
#include "primary/takeover.h"
#include "run/run_once.h"
#include "sim/simulator.h"

using namespace hapair;

namespace {

// A mode no built-in approach uses.
constexpr HaMode kCold = static_cast<HaMode>(200);

class ColdPrimarySide : public StatelessPrimarySide {
 public:
  using StatelessPrimarySide::StatelessPrimarySide;
  void on_tick(TimeUs now, Effects& eff) override {
    server_.count("cold_primary_ticks");
    StatelessPrimarySide::on_tick(now, eff);
  }
};

std::unique_ptr<PrimarySide> make_cold_primary_side(Server& server, const PrimaryOptions& /*options*/) {
  return std::make_unique<ColdPrimarySide>(server);
}

class ColdStandbyRole : public StandbyRole {
 public:
  explicit ColdStandbyRole(Server& server) : StandbyRole(server) {}

  void on_start(TimeUs now, Effects& eff) override {
    watch_.start(now);
    server_.trace(eff, now, TraceKind::start).with(TraceKey::role, Role::spare).with(TraceKey::ha, server_.node().mode());
  }
  void on_tick(TimeUs now, Effects& eff) override { watch_primary(now, eff); }
  void on_message(TimeUs now, const Envelope& env, Effects& eff) override {
    watch_.heard_from(env.header.sender, now);
    if (const auto* t = std::get_if<Takeover>(&env.body)) {
      if (auto next = standby_learns_takeover(server_, now, *t, eff)) successor_ = std::move(next);
    }
  }
  TimeUs next_wakeup_us() const override { return successor_ ? kNever : watch_.next_wakeup_us(); }

 private:
  void primary_failed(TimeUs now, Effects& eff, Detector detector) override {
    begin_takeover(server_, now, eff, watch_.last_heard_us(), detector);
    server_.workload().reset();
    std::map<StreamId, TupleId> after;
    for (const auto& [s, in] : server_.inputs()) after[s] = kReplayOnlyNew;
    server_.inputs().request_replay(now, eff, after, 0);
    server_.trace(eff, now, TraceKind::takeover).with(TraceKey::ha, kCold).with(TraceKey::exact_ids, false).with_text("cold");
    PrimaryOptions options;
    options.took_over = true;
    options.rebase_when_consumers_ready = true;
    successor_ = std::make_unique<PrimaryRole>(server_, options, make_cold_primary_side(server_, options));
  }
};

std::unique_ptr<RoleBehaviour> make_cold_standby_role(Server& server, bool /*rejoined*/) {
  return std::make_unique<ColdStandbyRole>(server);
}

ApproachTraits cold_traits() {
  ApproachTraits t;
  t.mode = kCold;
  t.name = "cold";
  t.title = "cold standby";
  t.standbys = 1;
  t.standby_suffix = ".cold";
  t.standby_role = Role::spare;
  t.promise = {RecoveryType::gap, RecoveryType::gap, RecoveryType::gap};
  return t;
}

// The registration: one record of traits, one of ends.
const ApproachCatalog& catalog() {
  static const ApproachCatalog c = ApproachCatalog::builtin().with(cold_traits());
  return c;
}
const ApproachRegistry& registry() {
  static const ApproachRegistry r =
      ApproachRegistry::builtin().with(Approach{kCold, &make_cold_primary_side, &make_cold_standby_role});
  return r;
}

std::shared_ptr<const Plan> cold_plan() {
  Topology t = default_topology();
  t.settings.ha = kCold;
  t.settings.duration_s = 3.0;
  t.source_file = "toy";
  return std::make_shared<const Plan>(make_plan(t, catalog()));
}

struct ToyRun {
  RunResult result;
  SemanticsReport semantics;
  GuaranteeJudgement judgement;
};

ToyRun run(const std::shared_ptr<const Plan>& plan, std::vector<FaultSpec> faults) {
  SimOptions options;
  options.faults = std::move(faults);
  const CoreFactory factory = [](std::shared_ptr<const Plan> p, NodeId n) {
    return make_node_core_from(registry(), std::move(p), n);
  };
  ToyRun r;
  r.result = run_simulation(plan, options, factory);
  const Reference reference = compute_reference(*plan);
  r.semantics = judge_run(judge_against(*plan, reference, r.result), reference);
  r.judgement = judge_guarantee(plan->traits(plan->fragment_id("aggregate")), plan->settings().determinants,
                                !reference.arbitrary_operators.empty(), r.semantics, r.result.completed,
                                r.result.errors, beyond_guarantee(*plan, r.result));
  return r;
}

std::size_t takeovers_by(const Plan& plan, const RunResult& r, const std::string& node) {
  std::size_t n = 0;
  for (const TraceEvent& e : r.events) n += e.kind == TraceKind::takeover && e.node == plan.node_id(node);
  return n;
}

}  // namespace

TEST_CASE("a toy approach registered in the tests' folder runs end to end in the simulator with no other file changed",
          "[scenarios][approach]") {
  const auto plan = cold_plan();
  // The plan reads the toy's traits: every operator fragment gets one standby named by its suffix.
  REQUIRE(plan->node_id("filter.cold") != kNoNode);
  REQUIRE(plan->node_id("aggregate.cold") != kNoNode);
  CHECK(plan->traits(plan->fragment_id("aggregate")).name == "cold");
  CHECK(plan->traits(plan->fragment_id("source")).baseline);  // sources never get standbys

  SECTION("failure free: precise, within the toy's guarantee, and its primary end ran") {
    const ToyRun r = run(plan, {});
    INFO(r.semantics.note);
    CHECK(r.result.completed);
    CHECK(r.semantics.verdict == "precise");
    CHECK(r.judgement.klass == GuaranteeClass::ok);
    CHECK(r.result.counters.at("aggregate").at("cold_primary_ticks") > 0);
    CHECK(takeovers_by(*plan, r.result, "aggregate.cold") == 0);
  }
  SECTION("a crash of the primary: the cold standby takes over, the output goes on, a gap is what it promised") {
    FaultSpec crash;
    crash.kind = FaultKind::crash;
    crash.node = "aggregate";
    crash.at_s = 1.0;
    const ToyRun r = run(plan, {crash});
    INFO(r.semantics.note << " " << r.judgement.reason);
    CHECK(r.result.completed);
    CHECK(takeovers_by(*plan, r.result, "aggregate.cold") == 1);
    // Output delivered after the takeover: the standby really became the primary.
    TimeUs takeover_us = kNever;
    for (const TraceEvent& e : r.result.events)
      if (e.kind == TraceKind::takeover && e.node == plan->node_id("aggregate.cold")) takeover_us = e.at_us;
    std::size_t after = 0;
    for (const Delivery& d : r.result.deliveries) after += d.at_us > takeover_us;
    CHECK(after > 0);
    // Cold recovery restarts from empty state: the window open at the crash is lost.
    CHECK(r.semantics.verdict == "gap");
    CHECK(r.semantics.lost > 0);
    CHECK(r.judgement.klass == GuaranteeClass::ok);
    CHECK(r.judgement.reason == "gap expected (cold)");
  }
  SECTION("a plan that names it without its registration is refused, naming the approaches there are") {
    Topology t = default_topology();
    t.settings.ha = kCold;
    const auto problems = validate(t);  // the built-in catalog only
    REQUIRE(problems.size() == 1);
    CHECK(problems.front().find("ha = approach 200: not an approach of this build (allowed: none, amnesia, upstream, "
                                "passive, active, hybrid, checkpoint)") != std::string::npos);
  }
}
