// Link emulation on real processes (docs/LINKS.md): node processes over loopback whose transport
// holds every message 4 ms + U[0, 2) ms (5 ms +- 1 ms) and loses 1 % of them. A passive-standby
// chain with a SIGKILL of its aggregate is still judged precise against the failure-free
// reference, and the run's own trace shows the delay: every batch crossed an emulated hop no
// faster than the configured latency, and the emulated hops' median exceeds the one plain hop's
// (its own control, in the same run) by about the configured delay. Only lower bounds and
// within-run differences are asserted: the delay is a lower bound by construction, and how late
// a busy machine serves a message is not this test's business.
#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "e2e/e2e_support.h"

using namespace hapair;
using namespace hapair::e2e;

namespace {

constexpr double kLatencyMs = 4.0;
constexpr double kJitterMs = 2.0;

void lossy_chain(Topology& t) {
  t.settings.trace_level = TraceLevel::data;  // batch_sent and batch_received: the one-hop times
  t.links.defaults.latency_ms = kLatencyMs;
  t.links.defaults.jitter_ms = kJitterMs;
  t.links.defaults.loss_ratio = 0.01;
  // The last hop stays plain: the control the emulated hops are measured against.
  LinkSpec plain;
  plain.from = "aggregate";
  plain.to = "sink";
  plain.settings.latency_ms = 0.0;
  plain.settings.jitter_ms = 0.0;
  plain.settings.loss_ratio = 0.0;
  t.links.links = {plain};
}

// One-hop times of the batches the run traced, per (from fragment, to fragment): from a batch's
// first batch_sent to its first batch_received (same stream, sender, receiver and ids).
std::map<std::pair<std::string, std::string>, std::vector<TimeUs>> one_hop_us(const Plan& plan, const RunResult& r) {
  using Key = std::tuple<NodeId, NodeId, std::int64_t, std::int64_t, std::int64_t>;
  std::map<Key, TimeUs> sent, received;
  for (const TraceEvent& e : r.events) {
    if (e.kind != TraceKind::batch_sent && e.kind != TraceKind::batch_received) continue;
    const NodeId peer = e.node_of(TraceKey::peer);
    const bool is_sent = e.kind == TraceKind::batch_sent;
    const Key key{is_sent ? e.node : peer, is_sent ? peer : e.node, e.get(TraceKey::stream).value_or(-1),
                  e.get(TraceKey::first_id).value_or(-1), e.get(TraceKey::last_id).value_or(-1)};
    auto& times = is_sent ? sent : received;
    if (times.find(key) == times.end()) times[key] = e.at_us;
  }
  std::map<std::pair<std::string, std::string>, std::vector<TimeUs>> out;
  for (const auto& [key, at_us] : received) {
    auto s = sent.find(key);
    if (s == sent.end()) continue;
    const std::string from = plan.fragments.at(plan.nodes.at(std::get<0>(key)).fragment).name;
    const std::string to = plan.fragments.at(plan.nodes.at(std::get<1>(key)).fragment).name;
    out[{from, to}].push_back(at_us - s->second);
  }
  return out;
}

TimeUs median(std::vector<TimeUs> v) {
  REQUIRE_FALSE(v.empty());
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("a passive chain on links of 5 ms +- 1 ms with 1 % loss stays precise through a SIGKILL, and its hops show the delay", "[e2e][links]") {
  auto plan = plan_of("", HaMode::passive, 2.0, lossy_chain);
  const RunOutcome o = run_real(plan, {crash("aggregate", 1.0)});
  check_precise(o);
  CHECK(count_events(o.result, "takeover") >= 1);

  // The links really lost messages, and the protocols made up for them.
  std::int64_t lost = 0, released = 0, delay_us = 0, late_us = 0;
  for (const auto& node_counters : o.result.counters) {
    const auto& counters = node_counters.second;  // clang 14 cannot capture a structured binding
    auto get = [&](const char* name) {
      auto it = counters.find(name);
      return it == counters.end() ? std::int64_t{0} : it->second;
    };
    lost += get("link_lost");
    released += get("link_released");
    delay_us += get("link_delay_us_total");
    late_us += get("link_late_us_total");
  }
  INFO("released " << released << ", lost " << lost << ", mean scheduled delay " << delay_us / std::max<std::int64_t>(released, 1)
                   << " us, mean release lateness " << late_us / std::max<std::int64_t>(released, 1) << " us");
  CHECK(lost > 0);
  REQUIRE(released > 0);
  CHECK(delay_us >= released * static_cast<std::int64_t>(kLatencyMs * 1000));

  const auto hops = one_hop_us(*plan, o.result);
  const std::vector<std::pair<std::string, std::string>> emulated = {{"source", "filter"}, {"filter", "aggregate"}};
  const auto plain = hops.find({"aggregate", "sink"});
  REQUIRE(plain != hops.end());
  const TimeUs plain_median = median(plain->second);
  for (const auto& hop : emulated) {
    INFO(hop.first << " -> " << hop.second);
    const auto h = hops.find(hop);
    REQUIRE(h != hops.end());
    REQUIRE(h->second.size() > 20);
    // By construction: nothing crosses an emulated hop faster than latency_ms (the times are the
    // same host's run clock; 50 us for the stamps' rounding).
    CHECK(*std::min_element(h->second.begin(), h->second.end()) >= static_cast<TimeUs>(kLatencyMs * 1000) - 50);
    // The shift against the plain hop of the same run is at least the latency.
    const TimeUs m = median(h->second);
    INFO("median " << m << " us, plain hop's median " << plain_median << " us");
    CHECK(m - plain_median >= static_cast<TimeUs>(kLatencyMs * 1000) - 500);
  }
}
