// The query network as the user describes it (a topology file or the built-in default), as
// plain values. The harness parses files into this; validate() and make_plan() (plan.h) turn it
// into a deployment with numeric ids that every core receives.
//
// Paper: a query network is a DAG of operators (boxes) joined by streams, split into fragments,
// each fragment on one server (section 2). Each fragment has an HA mode: none, amnesia (gap
// recovery), upstream backup, passive standby or active standby (section 4).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocols/approach_traits.h"
#include "protocols/operator_traits.h"

namespace hapair {

enum class FragmentKind { source, operators, sink };
enum class QueueFullPolicy { backpressure, error };
enum class CheckpointMode { full, delta };
// Which fragments roll back when one fails under global checkpoints (ha = checkpoint,
// docs/CHECKPOINT.md): Flink's failover strategies, the whole job or the failed fragment's region.
enum class FailoverMode : std::uint8_t { full, region };
// Whether a fragment under global checkpoints holds each input at its barrier until all are
// there (aligned: Flink's exactly-once default) or snapshots at the first barrier (unaligned).
enum class CheckpointAlignment : std::uint8_t { aligned, unaligned };
enum class Field { key, value };
enum class CompareOp { lt, le, gt, ge, eq, ne };
enum class AggregateFunction { count, sum, avg, min, max };
enum class JoinCombine { sum, left, right, product };
enum class DistributionKind { uniform, normal, exponential };
// How an upstream decides what its downstream no longer needs (experiment 6): from the
// operators' cause functions, or by a rule that knows nothing about them.
enum class TrimmingRule { exact, conservative };
// How a standby (and a primary, of its standby) tells that its partner failed (docs/TOPOLOGY.md):
// `heartbeat` is the paper's detector, heartbeat messages served by the node's own loop;
// `connection_heartbeat` adds the loss of the partner's connection (a crashed process's kernel
// closes it at once) and, on real processes, moves the heartbeats into ZeroMQ's I/O thread so a
// busy node's heartbeats are not late.
enum class DetectorKind { heartbeat, connection_heartbeat };
// What the nodes record as typed trace events (protocols/trace.h): control (failures, detection,
// takeover, replay, checkpoints, pairs) or data (those and every batch, ack and trim).
enum class TraceLevel { control, data };
// How a Union merges its inputs: as they arrive (arbitrary: the paper's Union) or in timestamp
// order using its inputs' boundaries (deterministic: Borealis's serializing Union, SUnion).
enum class UnionOrder { arrival, timestamp };
// What a source generates (docs/TOPOLOGY.md, "Workload generators"): hapair's own uniform keys
// and distributed values, NEXMark's auction events (the Apache Beam generator), or the Yahoo
// Streaming Benchmark's ad events.
enum class SourceGeneratorKind { uniform, nexmark, ysb };
// The kind of NEXMark event a nexmark source emits (one kind per source).
enum class NexmarkEvent { person, auction, bid };

const char* to_string(FragmentKind);
const char* to_string(QueueFullPolicy);
const char* to_string(CheckpointMode);
const char* to_string(FailoverMode);
const char* to_string(CheckpointAlignment);
const char* to_string(Field);
const char* to_string(CompareOp);
const char* to_string(AggregateFunction);
const char* to_string(JoinCombine);
const char* to_string(DistributionKind);
const char* to_string(TrimmingRule);
const char* to_string(DetectorKind);
const char* to_string(TraceLevel);
const char* to_string(UnionOrder);
const char* to_string(SourceGeneratorKind);
const char* to_string(NexmarkEvent);

// Parse an enum from its name; nullopt when unknown. allowed_*() lists the names for errors.
std::optional<QueueFullPolicy> parse_queue_full_policy(const std::string&);
std::optional<CheckpointMode> parse_checkpoint_mode(const std::string&);
std::optional<FailoverMode> parse_failover_mode(const std::string&);
std::optional<CheckpointAlignment> parse_checkpoint_alignment(const std::string&);
std::optional<Field> parse_field(const std::string&);
std::optional<CompareOp> parse_compare_op(const std::string&);
std::optional<AggregateFunction> parse_aggregate_function(const std::string&);
std::optional<JoinCombine> parse_join_combine(const std::string&);
std::optional<DistributionKind> parse_distribution_kind(const std::string&);
std::optional<TrimmingRule> parse_trimming_rule(const std::string&);
std::optional<DetectorKind> parse_detector_kind(const std::string&);
std::optional<TraceLevel> parse_trace_level(const std::string&);
std::optional<UnionOrder> parse_union_order(const std::string&);
std::optional<SourceGeneratorKind> parse_source_generator_kind(const std::string&);
std::optional<NexmarkEvent> parse_nexmark_event(const std::string&);
std::string allowed_queue_full_policies();
std::string allowed_checkpoint_modes();
std::string allowed_failover_modes();
std::string allowed_checkpoint_alignments();
std::string allowed_fields();
std::string allowed_compare_ops();
std::string allowed_aggregate_functions();
std::string allowed_join_combines();
std::string allowed_distribution_kinds();
std::string allowed_trimming_rules();
std::string allowed_detector_kinds();  // "heartbeat, connection+heartbeat"
std::string allowed_trace_levels();    // "control, data"
std::string allowed_union_orders();    // "arrival, timestamp"
std::string allowed_source_generator_kinds();  // "uniform, nexmark, ysb"
std::string allowed_nexmark_events();          // "person, auction, bid"

struct ValueDistribution {
  DistributionKind kind = DistributionKind::uniform;
  double a = 0.0;    // uniform: min; normal: mean; exponential: mean
  double b = 100.0;  // uniform: max (exclusive); normal: stddev; exponential: unused
  friend bool operator==(const ValueDistribution&, const ValueDistribution&) = default;
};

// NEXMark (generator = nexmark): the Apache Beam NEXMark generator's knobs that shape the events
// (NexmarkConfiguration, with its defaults), the event kind this source emits and the two event
// fields it projects into (key, value). Every source of a network sees the same global event
// sequence, so its streams line up: event number n has ts = (n + 1) / events_per_s.
struct NexmarkSpec {
  double events_per_s = 10000.0;  // the whole sequence's rate (Beam's firstEventRate)
  NexmarkEvent event = NexmarkEvent::bid;
  std::string key_field = "auction";  // a field of `event` (nexmark_field_names)
  std::string value_field = "price";
  std::int64_t hot_auction_ratio = 2;   // a bid is for the hot auction with probability 1 - 1/ratio
  std::int64_t hot_sellers_ratio = 4;   // an auction's seller is the hot seller with 1 - 1/ratio
  std::int64_t hot_bidders_ratio = 4;   // a bid's bidder is the hot bidder with 1 - 1/ratio
  std::int64_t num_in_flight_auctions = 100;  // bids pick among this many recent auctions
  std::int64_t num_active_people = 1000;      // sellers and bidders among this many recent people
  friend bool operator==(const NexmarkSpec&, const NexmarkSpec&) = default;
};

// Yahoo Streaming Benchmark (generator = ysb): ad events with an ad uniform over
// campaigns x ads_per_campaign ads, and the two event fields projected into (key, value). Its
// rate is the source's rate_tps.
struct YsbSpec {
  std::int64_t campaigns = 100;
  std::int64_t ads_per_campaign = 10;
  // The ad -> campaign table's seed, apart from the run's seed: YSB's setup writes the table once
  // (to Redis) and every run's events and the query's lookup (table = "ysb") read the same one.
  std::uint64_t campaign_seed = 1;
  std::string key_field = "ad";  // a field of ysb_field_names()
  std::string value_field = "event_type";
  friend bool operator==(const YsbSpec&, const YsbSpec&) = default;
};

// The fields each generator can project into a tuple's (key, value), in documentation order.
const std::vector<std::string>& nexmark_field_names(NexmarkEvent);
const std::vector<std::string>& ysb_field_names();
std::string allowed_nexmark_fields(NexmarkEvent);  // "auction, bidder, price" for bids
std::string allowed_ysb_fields();
// The fields a source projects when its file does not say: bid "auction,price", auction
// "id,seller", person "id,state".
std::pair<std::string, std::string> nexmark_default_fields(NexmarkEvent);

// Rate spikes of a uniform or ysb source: from spike_first_s on, every spike_every_s seconds the
// rate is spike_factor times rate_tps for spike_length_s (a transient overload, what hybrid
// standby's input queue trigger is for; experiment `hybrid`). every_s = 0: no spikes, and tuple i
// is at i / rate_tps exactly as without them. With spikes, tuple i is at the moment the
// cumulative rate reaches i (docs/TOPOLOGY.md, "Rate spikes").
struct RateSpikes {
  double every_s = 0.0;
  double length_s = 0.0;
  double factor = 1.0;
  double first_s = 0.0;
  bool on() const { return every_s > 0.0; }
  friend bool operator==(const RateSpikes&, const RateSpikes&) = default;
};

// A source pushes a seeded, deterministic stream: tuple i (from 1) is a pure function of
// (seed, spec, i), so a reference run can recompute any tuple. The uniform generator: ts =
// i / rate, a key uniform in [0, key_count) and a value from the distribution, derived from
// (seed, stream name, i). The nexmark and ysb generators: operators/nexmark.h, operators/ysb.h.
struct SourceSpec {
  std::string stream;
  SourceGeneratorKind generator = SourceGeneratorKind::uniform;
  double rate_tps = 2000.0;  // uniform and ysb
  std::int64_t key_count = 8;  // uniform
  ValueDistribution values;    // uniform
  bool integer_values = true;  // uniform: round values down, so sums are exact
  NexmarkSpec nexmark;         // generator == nexmark
  YsbSpec ysb;                 // generator == ysb
  RateSpikes spikes;           // uniform and ysb
  friend bool operator==(const SourceSpec&, const SourceSpec&) = default;
};

// The rate that the rate overrides (--rate-tps, the rate_tps and load sweeps) read and set: a
// source's rate_tps, or for a nexmark source the event sequence's events_per_s (its own tuple
// rate is that times its event kind's share, and all nexmark streams of a network keep one
// sequence).
double source_rate_setting(const SourceSpec&);
void set_source_rate_setting(SourceSpec&, double rate);

struct OperatorSpec {
  std::string name;
  OperatorKind kind = OperatorKind::filter;
  std::vector<std::string> inputs;  // stream names, in port order
  std::string output;               // stream name
  // filter: keep tuples where `field op constant`
  Field filter_field = Field::value;
  CompareOp filter_op = CompareOp::lt;
  double filter_constant = 0.0;
  // filter: compare `field % filter_modulo` (the field taken as a whole number, into
  // [0, filter_modulo)) when > 0: `where = "key % 123 == 0"`
  std::int64_t filter_modulo = 0;
  // map: value' = value * scale + offset; key' = key mod key_modulo (when > 0)
  double map_scale = 1.0;
  double map_offset = 0.0;
  std::int64_t map_key_modulo = 0;
  // aggregate over windows [k*slide, k*slide + window) of event time, aligned to absolute time
  AggregateFunction function = AggregateFunction::sum;
  std::int64_t window_ms = 200;
  std::int64_t slide_ms = 20;
  bool group_by_key = true;
  // join: left and right tuples with equal keys and |ts_l - ts_r| <= join_window_ms
  std::int64_t join_window_ms = 50;
  JoinCombine combine = JoinCombine::sum;
  // union: arrival order (arbitrary) or timestamp order (deterministic, SUnion)
  UnionOrder union_order = UnionOrder::arrival;
  // The knobs of operator types declared in their traits (project, lookup, ...), by name; a knob
  // not here has its default (operator_param()).
  std::map<std::string, double> params;
  std::string where;  // "file:line" of the definition, for error messages
  friend bool operator==(const OperatorSpec&, const OperatorSpec&) = default;
};

struct FragmentSpec {
  std::string name;
  FragmentKind kind = FragmentKind::operators;
  std::optional<HaMode> ha;  // unset: the network default
  SourceSpec source;                   // kind == source
  std::vector<OperatorSpec> operators; // kind == operators
  std::vector<std::string> sink_inputs;  // kind == sink
  // Data endpoints. Empty: the launcher binds tcp://127.0.0.1:* and distributes the port.
  std::string endpoint;
  std::string standby_endpoint;
  // Runs on several hosts (docs/HOSTS.md): the host (a name of the hosts file) the primary, and
  // the standby, are pinned to. Empty: placement chooses.
  std::string host;
  std::string standby_host;
  // Standbys of this fragment (k standbys, docs/TOPOLOGY.md); 0: the network's `standbys`.
  std::int64_t standbys = 0;
  std::string where;
  friend bool operator==(const FragmentSpec&, const FragmentSpec&) = default;
};

// Every knob of a run, with units last in the names. Every knob, its default and its allowed
// range are documented in docs/TOPOLOGY.md.
struct Settings {
  std::uint64_t seed = 1;
  double duration_s = 6.0;
  HaMode ha = kNoHa;
  // Standbys of every operator fragment whose approach has one (k standbys): 1 to
  // ApproachTraits::standbys_max (3 for passive standby, 1 for the others). A fragment's own
  // `standbys` overrides it.
  std::int64_t standbys = 1;
  std::int64_t batch_tuples = 100;         // tuples per TupleBatch message at most
  std::int64_t batch_flush_ms = 2;         // a partial batch waits at most this long
  std::int64_t heartbeat_interval_ms = 10;
  std::int64_t failure_timeout_ms = 30;    // missed heartbeats for this long => failed
  DetectorKind detector = DetectorKind::connection_heartbeat;
  // detector = connection+heartbeat on real processes: the ZMTP heartbeats' timeout, which
  // finds hangs and partitions only (crashes are found by the crash line within a millisecond),
  // so it can be long enough that CPU steal and a busy machine never look like a hang.
  std::int64_t hang_timeout_ms = 200;
  std::int64_t ack_interval_ms = 20;       // level-0 / level-1 acks at most this often
  std::int64_t checkpoint_interval_ms = 100;
  CheckpointMode checkpoint_mode = CheckpointMode::full;
  std::int64_t checkpoint_chunk_bytes = 1 << 20;
  std::int64_t output_queue_tuples_max = 1'000'000;  // retained output per stream
  std::int64_t input_queue_tuples_max = 100'000;     // accepted but not yet processed input
  std::int64_t inflight_tuples_max = 100'000;        // sent beyond the last level-0 ack
  QueueFullPolicy queue_full_policy = QueueFullPolicy::backpressure;
  bool determinants = true;                // active standby: ship Union's interleaving
  TrimmingRule trimming = TrimmingRule::exact;
  std::int64_t conservative_retention_ms = 2000;  // trimming=conservative: keep this much input
  double drain_timeout_s = 20.0;           // after the sources stop, wait this long for drain
  // The paper's model charges every operator a processing cost per input tuple. Real processes
  // spend this long (busy, on the CPU) per tuple an operator fragment processes; the simulator
  // adds it to its [sim] cpu_us_per_tuple for those tuples. 0: operators cost what their code
  // costs (near nothing for Filter/Map), so reprocessing after a failure is almost free.
  double operator_cost_us_per_tuple = 0.0;
  // A run that cannot complete (a sink can never see end of stream, e.g. no HA and a crash)
  // ends early: after duration_s, once no sink delivery arrived and no live node's output
  // queues changed for this long (and no fault is still to come), it stops as incomplete.
  double drain_quiet_s = 3.0;
  // A sender that sees no acknowledgement progress for this long re-sends from the last
  // acknowledged position (lost messages: a link that dropped or a connection that broke);
  // unacknowledged checkpoints, determinants, takeovers and replay requests are repeated too.
  std::int64_t retransmit_timeout_ms = 250;
  // Boundaries (only in a network with a Union in timestamp order): a stream with nothing to send
  // tells its consumers how far its timestamps have moved at most this often, so a serializing
  // Union waits at most about this long on a quiet input.
  std::int64_t boundary_interval_ms = 10;
  // Trace events every node records: control, or data (every batch sent and received, every
  // level-0 and level-1 ack, every trim as well), what the timeline's message view draws.
  TraceLevel trace_level = TraceLevel::control;
  // Hybrid standby (ha = hybrid, src/hybrid): when its passive standby becomes an active one and
  // back. A primary whose own tick ran this late (a stall: paused, starved of CPU; its standby
  // saw no heartbeat for two intervals, a missed deadline) switches it to active; 0: never on a
  // stall. The default is one heartbeat interval, so a stall that is still short of the failure
  // timeout (30 ms of silence) switches.
  std::int64_t hybrid_stall_ms = 10;
  // A primary with more than this many input tuples queued when an event's processing begins (a
  // backlog behind full output queues or a slow operator) switches it to active; 0: never.
  std::int64_t hybrid_input_queue_tuples = 10'000;
  // A primary that processes an input tuple more than this long after its source emitted it (its
  // timestamp: the input waited in queues, in the sockets as well, behind a slow or overloaded
  // operator) switches it to active; 0: never (the default).
  std::int64_t hybrid_latency_ms = 0;
  // Back to passive once no trigger held for this long.
  std::int64_t hybrid_calm_ms = 1000;
  // An explicit command: switch to active this long after the run's start (-1: never).
  std::int64_t hybrid_switch_at_ms = -1;
  // Global checkpoints (ha = checkpoint, src/checkpoint, docs/CHECKPOINT.md): the coordinator
  // keeps this many complete checkpoints (Flink's state.checkpoints.num-retained; two keep one to
  // fall back to), and rolls back the whole network or the failed fragment's region (Flink's
  // jobmanager.execution.failover-strategy, whose default is region). A checkpoint is triggered
  // every checkpoint_interval_ms.
  std::int64_t checkpoints_retained = 2;
  FailoverMode failover = FailoverMode::region;
  // Aligned (hold each input at its barrier) or unaligned (snapshot at the first barrier; the
  // snapshot's output queues carry the in-flight tuples): Flink's execution.checkpointing.unaligned.
  CheckpointAlignment checkpoint_alignment = CheckpointAlignment::aligned;
  // Local recovery (Flink's state.backend.local-recovery): every fragment also keeps its own
  // snapshots on its host, and a replacement on the same host restores from that copy instead of
  // the coordinator's (which it still gets when the host holds no copy of the checkpoint).
  bool local_recovery = false;
  std::string where;  // "file:line" of the [network] section, for error messages
  friend bool operator==(const Settings&, const Settings&) = default;
};

// A sender re-sends to a consumer that makes no progress after retransmit_timeout_ms, doubling
// the wait after every fruitless re-send at most this many times (so a consumer that is gone for
// good costs little, and one that comes back is served again within 16 timeouts).
inline constexpr std::uint32_t kRetransmitBackoffDoublingsMax = 4;
inline std::int64_t retransmit_backoff_max_ms(const Settings& s) {
  return s.retransmit_timeout_ms << kRetransmitBackoffDoublingsMax;
}

// Simulated network and machines (driver "sim" only; ignored by real processes).
struct SimSettings {
  double link_latency_ms = 0.1;          // mean one-way latency per message
  double link_jitter_ms = 0.02;          // uniform extra latency in [0, jitter)
  double bandwidth_bytes_per_s = 1.25e9; // per link (10 Gbit/s); big checkpoints take time
  double loss_ratio = 0.0;               // probability a data-plane message is dropped
  double duplication_ratio = 0.0;        // probability a message is delivered twice
  double reorder_ratio = 0.0;            // probability a message gets extra delay (overtaken)
  double cpu_us_per_tuple = 2.0;         // processing cost of one tuple at one operator
  double cpu_us_per_message = 5.0;       // fixed cost of handling one message
  double node_capacity = 1.0;            // relative CPU speed of every node
  std::string where;  // "file:line" of the [sim] section, for error messages
  friend bool operator==(const SimSettings&, const SimSettings&) = default;
};

// Link emulation (docs/LINKS.md): what hapair's own transport adds to every data-plane message
// a node sends over a link, on real processes (the sender holds it in a bounded delay queue and
// its loop releases it when due) and in the simulator alike (on top of [sim]'s wire). The keys
// mean what the [sim] network's keys of the same stem mean: a message is delayed by latency_ms
// plus a draw uniform in [0, jitter_ms), lost with probability loss_ratio, sent twice with
// probability duplication_ratio and serialised at bandwidth_bytes_per_s. A link never reorders:
// a message is released no earlier than its predecessor on the link. All zero (the default): no
// emulation, no queue, no random draw.
struct LinkSettings {
  double latency_ms = 0.0;             // the least extra one-way delay of every message
  double jitter_ms = 0.0;              // plus a delay uniform in [0, jitter_ms)
  double loss_ratio = 0.0;             // probability that a message is dropped
  double duplication_ratio = 0.0;      // probability that a message is sent twice
  double bandwidth_bytes_per_s = 0.0;  // 0: no limit; else bytes are serialised at this rate
  // The delay queue of one direction of one link: a message that would exceed either bound is
  // dropped there (tail drop, like a router's queue or netem's limit) and counted.
  std::int64_t queue_messages_max = 10'000;
  std::int64_t queue_bytes_max = 64 << 20;
  // Whether the link changes anything at all (the queue bounds alone do not).
  bool emulated() const {
    return latency_ms > 0.0 || jitter_ms > 0.0 || loss_ratio > 0.0 || duplication_ratio > 0.0 ||
           bandwidth_bytes_per_s > 0.0;
  }
  friend bool operator==(const LinkSettings&, const LinkSettings&) = default;
};

// The keys one [[link]] table gives; a key it does not give keeps the value [links] (or an
// earlier matching [[link]]) gave.
struct LinkOverride {
  std::optional<double> latency_ms;
  std::optional<double> jitter_ms;
  std::optional<double> loss_ratio;
  std::optional<double> duplication_ratio;
  std::optional<double> bandwidth_bytes_per_s;
  std::optional<std::int64_t> queue_messages_max;
  std::optional<std::int64_t> queue_bytes_max;
  friend bool operator==(const LinkOverride&, const LinkOverride&) = default;
};
void apply_link_override(LinkSettings& settings, const LinkOverride& override_keys);

// One [[link]] table: the messages from a node (or every node of a fragment) to another, or from
// the nodes pinned to one host to those pinned to another. Matching tables apply in file order.
struct LinkSpec {
  std::string from;       // a node name ("aggregate.backup") or a fragment name (every replica)
  std::string to;
  std::string from_host;  // or hosts: the nodes whose `host` / `standby_host` pin is this host
  std::string to_host;
  bool both_ways = true;  // also the messages from `to` to `from`
  LinkOverride settings;
  std::string where;  // "file:line" of the table, for error messages
  friend bool operator==(const LinkSpec&, const LinkSpec&) = default;
};

struct LinkTable {
  LinkSettings defaults;        // [links]: every link between two nodes
  std::vector<LinkSpec> links;  // [[link]]
  std::string where;            // "file:line" of [links]
  friend bool operator==(const LinkTable&, const LinkTable&) = default;
};

// [[switch]] (and `hapair run --switch NODE=APPROACH@SECONDS`): a live switch of an operator
// fragment's approach at a time of the run (docs/ARCHITECTURE.md "Live switching",
// docs/TOPOLOGY.md). Between upstream backup, passive, active and hybrid standby, one standby.
struct SwitchSpec {
  std::string fragment;
  HaMode to = kNoHa;
  double at_s = 0.0;
  std::string where;  // file:line, for errors
  friend bool operator==(const SwitchSpec& a, const SwitchSpec& b) {
    return a.fragment == b.fragment && a.to == b.to && a.at_s == b.at_s;
  }
};

struct Topology {
  std::string name = "default";
  std::string source_file;  // empty: built in
  Settings settings;
  SimSettings sim;
  LinkTable links;
  std::vector<FragmentSpec> fragments;
  // [placement]: node name -> host name, where a run on several hosts placed every node
  // (hosts/placement.h). Written by the launcher into the effective topology it hands the nodes,
  // so [[link]] tables by host (from_host, to_host) match where the nodes really run; empty
  // otherwise (then they match the pins, `host` and `standby_host`).
  std::map<std::string, std::string> placement;
  // Live switches of approaches, in the order written (the plan orders them by time).
  std::vector<SwitchSpec> switches;
  friend bool operator==(const Topology&, const Topology&) = default;
};

// The built-in default network: source -> filter (Filter) -> aggregate (windowed Aggregate) -> sink.
Topology default_topology();

}  // namespace hapair
