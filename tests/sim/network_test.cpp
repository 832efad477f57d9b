// The simulated network: latency and bandwidth arithmetic, FIFO links, loss, duplication,
// reordering and partitions, checked exactly in virtual time with scripted cores.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "sim/message_size.h"
#include "sim/simulator.h"
#include "sim/test_cores.h"

namespace hapair::simtest {
namespace {

Envelope envelope_of(NodeId sender, Message body) {
  Envelope e;
  e.header.sender = sender;
  e.body = std::move(body);
  return e;
}

ScriptedRun run(std::shared_ptr<Plan> plan, std::map<std::string, Script> scripts, SimOptions options = {},
               TimeUs until_us = 5'000'000) {
  return run_scripted(std::move(plan), std::move(scripts), std::move(options), until_us);
}

TEST_CASE("a message arrives after its transmission time plus the link latency", "[sim][network]") {
  auto plan = three_nodes(exact_network(1.0, 1e6));
  Script a;
  a.sends.push_back({0, 1, Heartbeat{7}});
  auto r = run(plan, {{"a", a}});
  auto got = r.journal->received("b");
  REQUIRE(got.size() == 1);
  const std::size_t bytes = sim::wire_bytes(envelope_of(0, Heartbeat{7}));
  const TimeUs tx_us = static_cast<TimeUs>((bytes * 1'000'000 + 999'999) / 1'000'000);
  CHECK(got[0].now_us == tx_us + 1000);
  CHECK(std::get<Heartbeat>(got[0].envelope->body).seq == 7);
  CHECK(r.result.counters.at("a").at("bytes_sent.heartbeat") == static_cast<std::int64_t>(bytes));
  CHECK(r.result.counters.at("a").at("messages_sent.heartbeat") == 1);
}

TEST_CASE("a 1 MB checkpoint on a 1 MB/s link arrives one second later than a tiny message", "[sim][network]") {
  auto plan = three_nodes(exact_network(0.5, 1e6));
  Script a;
  a.sends.push_back({0, 1, checkpoint_of_bytes(1'000'000)});
  a.sends.push_back({0, 2, Heartbeat{1}});  // another link: not queued behind the checkpoint
  auto r = run(plan, {{"a", a}});
  auto big = r.journal->received("b");
  auto tiny = r.journal->received("c");
  REQUIRE(big.size() == 1);
  REQUIRE(tiny.size() == 1);
  const auto big_bytes = static_cast<TimeUs>(sim::wire_bytes(envelope_of(0, checkpoint_of_bytes(1'000'000))));
  const auto tiny_bytes = static_cast<TimeUs>(sim::wire_bytes(envelope_of(0, Heartbeat{1})));
  // At 1 byte per microsecond, transmission time in microseconds equals the size in bytes.
  CHECK(big[0].now_us == big_bytes + 500);
  CHECK(tiny[0].now_us == tiny_bytes + 500);
  CHECK(big[0].now_us - tiny[0].now_us == big_bytes - tiny_bytes);
  CHECK(big[0].now_us - tiny[0].now_us >= 1'000'000);
  CHECK(big[0].now_us - tiny[0].now_us < 1'001'000);
  CHECK(r.result.counters.at("a").at("bytes_sent.checkpoint") == big_bytes);
}

TEST_CASE("a link is FIFO: a tiny message sent after a big checkpoint waits for it", "[sim][network]") {
  auto plan = three_nodes(exact_network(0.5, 1e6));
  Script a;
  a.sends.push_back({0, 1, checkpoint_of_bytes(100'000)});
  a.sends.push_back({0, 1, Heartbeat{1}});
  auto r = run(plan, {{"a", a}});
  auto got = r.journal->received("b");
  REQUIRE(got.size() == 2);
  const auto big_bytes = static_cast<TimeUs>(sim::wire_bytes(envelope_of(0, checkpoint_of_bytes(100'000))));
  const auto tiny_bytes = static_cast<TimeUs>(sim::wire_bytes(envelope_of(0, Heartbeat{1})));
  CHECK(std::holds_alternative<Checkpoint>(got[0].envelope->body));
  CHECK(got[0].now_us == big_bytes + 500);
  CHECK(got[1].now_us == big_bytes + tiny_bytes + 500);
}

Script burst_of_heartbeats(NodeId to, std::uint64_t count) {
  Script s;
  for (std::uint64_t i = 1; i <= count; ++i) s.sends.push_back({0, to, Heartbeat{i}});
  return s;
}

std::vector<std::uint64_t> seqs(const std::vector<Seen>& seen) {
  std::vector<std::uint64_t> out;
  for (const auto& s : seen) out.push_back(std::get<Heartbeat>(s.envelope->body).seq);
  return out;
}

TEST_CASE("loss drops the configured share of messages, the same ones for the same seed", "[sim][network]") {
  SimSettings s = exact_network(0.1, 1e9);
  s.loss_ratio = 0.1;
  auto plan = three_nodes(s);
  auto lossy = [&](std::uint64_t seed) {
    SimOptions o;
    o.seed = seed;
    return run(plan, {{"a", burst_of_heartbeats(1, 2000)}}, o);
  };
  auto first = lossy(11);
  auto again = lossy(11);
  auto other = lossy(12);
  const auto got = seqs(first.journal->received("b"));
  const std::int64_t dropped = first.result.counters.at("a").at("sim.dropped_loss");
  CHECK(static_cast<std::int64_t>(got.size()) + dropped == 2000);
  CHECK(dropped > 140);
  CHECK(dropped < 260);
  CHECK(first.result.counters.at("b").at("sim.messages_received") == static_cast<std::int64_t>(got.size()));
  CHECK(seqs(again.journal->received("b")) == got);
  CHECK(seqs(other.journal->received("b")) != got);
  // Everything sent is counted as sent, lost or not (as the real transport counts it).
  CHECK(first.result.counters.at("a").at("messages_sent.heartbeat") == 2000);
}

TEST_CASE("duplication delivers the configured share of messages twice", "[sim][network]") {
  SimSettings s = exact_network(0.1, 1e9);
  s.duplication_ratio = 0.2;
  auto plan = three_nodes(s);
  SimOptions o;
  o.seed = 5;
  auto r = run(plan, {{"a", burst_of_heartbeats(1, 2000)}}, o);
  const auto got = seqs(r.journal->received("b"));
  const std::int64_t duplicated = r.result.counters.at("a").at("sim.duplicated");
  CHECK(static_cast<std::int64_t>(got.size()) == 2000 + duplicated);
  CHECK(duplicated > 330);
  CHECK(duplicated < 470);
  CHECK(std::set<std::uint64_t>(got.begin(), got.end()).size() == 2000);
}

TEST_CASE("reordering holds some messages back so that later ones overtake them", "[sim][network]") {
  SimSettings s = exact_network(0.1, 1e8);
  s.reorder_ratio = 0.3;
  auto plan = three_nodes(s);
  auto r = run(plan, {{"a", burst_of_heartbeats(1, 500)}});
  const auto got = seqs(r.journal->received("b"));
  REQUIRE(got.size() == 500);
  CHECK_FALSE(std::is_sorted(got.begin(), got.end()));
  CHECK(std::set<std::uint64_t>(got.begin(), got.end()).size() == 500);
}

TEST_CASE("without reordering a link delivers in send order even with jitter", "[sim][network]") {
  SimSettings s = exact_network(0.1, 1e8);
  s.link_jitter_ms = 0.05;
  auto plan = three_nodes(s);
  auto r = run(plan, {{"a", burst_of_heartbeats(1, 500)}});
  const auto got = seqs(r.journal->received("b"));
  REQUIRE(got.size() == 500);
  CHECK(std::is_sorted(got.begin(), got.end()));
  // The jitter did vary the delays (otherwise this test would check nothing).
  std::set<TimeUs> gaps;
  const auto seen = r.journal->received("b");
  for (std::size_t i = 1; i < seen.size(); ++i) gaps.insert(seen[i].now_us - seen[i - 1].now_us);
  CHECK(gaps.size() > 1);
}

TEST_CASE("a partition drops messages in both directions only while it lasts", "[sim][network][partition]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  Script a;
  a.heartbeat_every_us = 1000;
  a.heartbeat_to = 1;
  Script b;
  b.heartbeat_every_us = 1000;
  b.heartbeat_to = 0;
  SimOptions o;
  o.faults.push_back(FaultSpec{FaultKind::partition, "a", "b", 0.010, 0.010});
  auto r = run(plan, {{"a", a}, {"b", b}}, o, 30'000);
  for (const std::string receiver : {"a", "b"}) {
    INFO("receiver " << receiver);
    std::set<TimeUs> sent_times;
    for (const auto& s : r.journal->received(receiver)) sent_times.insert(s.envelope->header.sent_us);
    for (TimeUs t = 0; t < 30'000; t += 1000) {
      INFO("sent at " << t);
      if (t < 10'000 || t >= 20'000)
        CHECK(sent_times.count(t) == 1);
      else
        CHECK(sent_times.count(t) == 0);
    }
  }
  CHECK(r.result.counters.at("a").at("sim.dropped_partition") == 10);
  CHECK(r.result.counters.at("b").at("sim.dropped_partition") == 10);
  const auto& ev = r.result.events;
  CHECK(std::any_of(ev.begin(), ev.end(), [](const TraceEvent& e) {
    return e.kind == TraceKind::failure && e.enum_of<FaultKind>(TraceKey::fault) == FaultKind::partition && e.at_us == 10'000;
  }));
  CHECK(std::any_of(ev.begin(), ev.end(), [](const TraceEvent& e) { return e.kind == TraceKind::heal && e.at_us == 20'000; }));
}

TEST_CASE("a message in flight when the partition starts is dropped", "[sim][network][partition]") {
  auto plan = three_nodes(exact_network(5.0, 1e9));
  Script a;
  a.sends.push_back({0, 1, Heartbeat{1}});
  SimOptions o;
  o.faults.push_back(FaultSpec{FaultKind::partition, "b", "a", 0.001, 0.001});
  auto r = run(plan, {{"a", a}}, o);
  CHECK(r.journal->received("b").empty());
  CHECK(r.result.counters.at("a").at("sim.dropped_partition") == 1);
}

TEST_CASE("a scripted kind drop removes only that kind on that link in its window", "[sim][network]") {
  auto plan = three_nodes(exact_network(0.1, 1e9));
  Script a;
  a.sends.push_back({0, 1, Heartbeat{1}});
  a.sends.push_back({0, 1, CheckpointAck{1}});
  a.sends.push_back({0, 2, CheckpointAck{2}});
  a.sends.push_back({2000, 1, CheckpointAck{3}});
  SimOptions o;
  o.kind_drops.push_back(KindDrop{"checkpoint_ack", "a", "b", 0.0, 0.001});
  std::vector<std::string> observed;
  o.on_send = [&](const SentMessage& m) {
    observed.push_back(std::string(message_kind_name(m.envelope->body)) + (m.dropped == sim::DropReason::rule ? "-dropped" : ""));
  };
  auto r = run(plan, {{"a", a}}, o);
  auto at_b = r.journal->received("b");
  REQUIRE(at_b.size() == 2);
  CHECK(std::holds_alternative<Heartbeat>(at_b[0].envelope->body));
  CHECK(std::get<CheckpointAck>(at_b[1].envelope->body).checkpoint_id == 3);
  CHECK(r.journal->received("c").size() == 1);
  CHECK(r.result.counters.at("a").at("sim.dropped_rule") == 1);
  CHECK(observed == std::vector<std::string>{"heartbeat", "checkpoint_ack-dropped", "checkpoint_ack", "checkpoint_ack"});
}

}  // namespace
}  // namespace hapair::simtest
