// Writes the seed corpora of the wire fuzz targets (fuzz/corpus/decode_fuzz: a valid encoding
// of every message kind, with typical and extreme field values, and a few broken frames;
// fuzz/corpus/envelope_fuzz: byte strings of several lengths for its structure-aware
// generator; fuzz/corpus/topology_fuzz and experiment_fuzz: the effective config, every knob
// written, of the built-in network under every approach and of experiment sections with every
// key). Run it when wire.capnp or the config format changes: make_seeds fuzz/corpus
// (the committed corpora also hold copies of experiments/networks/*, experiments/*/*.toml and a
// few hand-broken variants, which it does not write).
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "config/experiment_config.h"
#include "config/topology_file.h"
#include "protocols/codec.h"
#include "protocols/rng.h"

namespace {

using namespace hapair;

Bytes pattern(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng.next_u64());
  return b;
}

Tuple tuple(std::uint64_t i) { return Tuple{i, static_cast<TimeUs>(i) * 500, static_cast<std::int64_t>(i % 8), 12.5, i}; }

// A typical body of every kind (`extreme`: the largest field values instead).
Message body(std::size_t kind, bool extreme) {
  const std::uint64_t big = extreme ? std::numeric_limits<std::uint64_t>::max() : 42;
  const std::uint16_t id = extreme ? 0xfffe : 1;
  switch (kind) {
    case 0: return TupleBatch{id, {tuple(big - 2), tuple(big - 1), tuple(big)}, extreme, extreme, big - 3, big};
    case 1: return Level0Ack{id, big, extreme};
    case 2:
      return Level1Ack{id, big, big, pattern(24, 1),
                       {DownstreamRestartPoints{id, id, big, {StoredRestartPoint{big, big, pattern(8, 2), {}}}}}};
    case 3: return Checkpoint{big, extreme, big - 1, extreme ? 0xfffffffeu : 0u, extreme ? 0xffffffffu : 2u, pattern(200, 3)};
    case 4: return CheckpointAck{big};
    case 5: return Heartbeat{big};
    case 6: return Takeover{id, id, big, {{id, big}}};
    case 7: return Redirect{id, id, !extreme, big};
    case 8: return ReplayRequest{id, big - 1, big, big};
    case 9: return RestartPoints{id, big, {StoredRestartPoint{big, big, pattern(16, 4), {}}}};
    case 10: return Determinants{id, big, {DeterminantRecord{0, 3}, DeterminantRecord{id, extreme ? 0xffffffffu : 5u}}};
    case 11: return DeterminantAck{id, big};
    case 12: return Rejoin{id, id, big};
    case 13: return Candidacy{id, id, big};
    case 14: return CheckpointTrigger{big};
    case 15: return CheckpointBarrier{id, big, big - 1};
    case 16: return CheckpointComplete{big};
    case 17: return Rollback{big, big - 1, id, {0, id, 2}};
    case 18: return Restored{big, id};
    case 19: return Hello{"aggregate.backup", "tcp://127.0.0.1:40123", static_cast<std::int64_t>(big), "tcp://127.0.0.1:40124"};
    case 20: return Directory{{"tcp://127.0.0.1:1", "", "tcp://127.0.0.1:3"}, static_cast<std::int64_t>(big), {"tcp://127.0.0.1:2"}};
    case 21: return StopRun{extreme};
    case 22: return Kill{static_cast<std::int64_t>(big)};
    case 23: return NodeStats{static_cast<TimeUs>(big), extreme, {Counter{"bytes_sent.tuples", 1 << 30}}};
    case 24:
      return TraceBatch{{TraceEvent(10, id, TraceKind::takeover).with(TraceKey::epoch, 1).with(TraceKey::fragment_primary, 2)}};
    case 26: return ClockRequest{big, static_cast<std::int64_t>(big)};
    case 27: return ClockReply{big, static_cast<std::int64_t>(big), -static_cast<std::int64_t>(big >> 1), 0};
    default:  // 25, deliveries
      return DeliveryBatch{{Delivery{500, id, tuple(big)}}, extreme,
                           {MergeOrder{id, big, true, extreme, 0, big, {MergeRun{0, big, 3}}}}};
  }
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

bool write(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds CORPUS_DIR (writes CORPUS_DIR/decode_fuzz and CORPUS_DIR/envelope_fuzz)\n");
    return 2;
  }
  const std::string dir = argv[1];
  int written = 0;
  for (std::size_t kind = 0; kind < std::variant_size_v<Message>; ++kind) {
    for (bool extreme : {false, true}) {
      const Envelope e{Header{static_cast<NodeId>(extreme ? 0xffff : 2), extreme ? ~0ull : 1, 1'000'000},
                       body(kind, extreme)};
      const Bytes bytes = encode(e);
      const std::string name = std::string(kMessageKindNames[kind]) + (extreme ? "-extreme" : "");
      if (!write(dir + "/decode_fuzz/" + name, bytes)) return 1;
      ++written;
    }
  }
  // Broken frames: a truncated batch, a segment table claiming a huge segment, an unaligned length.
  const Bytes batch = encode(Envelope{Header{}, body(0, false)});
  written += write(dir + "/decode_fuzz/broken-truncated", Bytes(batch.begin(), batch.begin() + batch.size() / 2 / 8 * 8));
  Bytes huge = batch;
  huge[4] = huge[5] = huge[6] = 0xff;
  written += write(dir + "/decode_fuzz/broken-huge-segment", huge);
  written += write(dir + "/decode_fuzz/broken-unaligned", Bytes(batch.begin(), batch.end() - 3));
  for (int i = 0; i < 24; ++i) {
    const std::size_t n = 32u << (i % 6);
    written += write(dir + "/envelope_fuzz/random-" + std::to_string(i), pattern(n, 1000 + i));
  }
  for (int ha = 0; ha <= 4; ++ha) {
    Topology t = default_topology();
    t.settings.ha = static_cast<HaMode>(ha);
    t.settings.checkpoint_mode = ha % 2 == 0 ? CheckpointMode::full : CheckpointMode::delta;
    t.fragments.at(1).ha = HaMode::passive;
    written += write_text(dir + "/topology_fuzz/effective-" + to_string(t.settings.ha), write_topology(t));
    ExperimentSection section;
    section.approaches = {to_string(t.settings.ha), "active_nodet", "upstream_exact"};
    section.sweeps = {sweep_names().at(static_cast<std::size_t>(ha) % sweep_names().size())};
    section.points[section.sweeps[0]] = {10, 20.5, 100};
    section.quick_points[section.sweeps[0]] = {10};
    section.victim = "aggregate";
    section.fail_at_s = 1.5;
    section.fail_spread_s = 0.25 * ha;
    if (ha == 4) section.networks = {ExperimentNetwork{"union.toml", "merge"}, ExperimentNetwork{"join.toml", "join"}};
    written += write_text(dir + "/experiment_fuzz/effective-" + to_string(t.settings.ha),
                          write_experiment_section(section) + "\n" + write_topology(t));
  }
  std::printf("make_seeds: wrote %d files under %s\n", written, dir.c_str());
  return 0;
}
