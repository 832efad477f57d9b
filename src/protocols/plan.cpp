// Validation of a topology and its resolution into a deployment plan (plan.h).
//
// validate() never stops at the first problem: a user fixing a topology file wants every
// mistake in one go, each prefixed with the place of the item it concerns. make_plan() trusts
// a validated topology and asserts that it is one, because planning an invalid network is a
// caller bug, not bad input.
#include "protocols/plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "protocols/check.h"
#include "protocols/number_text.h"

namespace hapair {
namespace {

// Bounds that keep ids and per-tuple work bounded. NodeId is 16 bits and a fragment may need two
// nodes; Determinants address an operator with 16 bits.
constexpr std::size_t kFragmentsMax = 1000;
constexpr std::size_t kOperatorsPerFragmentMax = 1000;
constexpr std::int64_t kCheckpointChunkBytesMin = 1024;
// A chunk must fit comfortably in one message under the codec's 256 MiB limit.
constexpr std::int64_t kCheckpointChunkBytesMax = 64ll << 20;
// Every tuple falls into window_ms / slide_ms windows of an Aggregate; more would make the
// per-tuple work and the state unreasonably large.
constexpr std::int64_t kWindowsPerTupleMax = 10'000;
// NEXMark's ratios and windows, and YSB's table sizes: far beyond the benchmarks' own values,
// and small enough that ids and ad counts stay exact.
constexpr std::int64_t kNexmarkCountMax = 1'000'000'000;
constexpr std::int64_t kYsbCountMax = 1'000'000;

// Whole numbers print without an exponent (2e7 as 20000000), so messages echo what users write.
std::string num(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<std::int64_t>(v));
  return shortest_text(v);
}
std::string num(std::int64_t v) { return std::to_string(v); }

bool finite(double v) { return std::isfinite(v); }

// Names appear in node names, file sections and result files; '.' is reserved for the standby
// suffix (".spare", ".backup"), so a fragment can never be named like another's standby.
bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// tcp://HOST:PORT or tcp://HOST:* ; HOST is a name, an IPv4 address or a bracketed IPv6 address.
bool valid_endpoint(const std::string& e) {
  constexpr std::string_view kScheme = "tcp://";
  if (e.size() <= kScheme.size() || e.compare(0, kScheme.size(), kScheme) != 0) return false;
  const std::string rest = e.substr(kScheme.size());
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  const std::string host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  if (host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return false;
    for (std::size_t i = 1; i + 1 < host.size(); ++i) {
      const char c = host[i];
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.'))
        return false;
    }
  } else {
    for (char c : host) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_';
      if (!ok) return false;
    }
  }
  if (port == "*") return true;
  if (port.empty() || port.size() > 5) return false;
  for (char c : port)
    if (c < '0' || c > '9') return false;
  const int p = std::stoi(port);
  return p >= 1 && p <= 65535;
}

bool is_wildcard_endpoint(const std::string& e) { return e.size() >= 2 && e.compare(e.size() - 2, 2, ":*") == 0; }

OperatorClass class_of(const OperatorSpec& o) { return OperatorCatalog::builtin().of(o.kind).klass(o); }

OperatorClass weaker(OperatorClass a, OperatorClass b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

// The operator that produces each stream of a topology (sources: none).
struct StreamSource {
  const FragmentSpec* fragment = nullptr;
  const OperatorSpec* op = nullptr;
};

HaMode effective_ha(const Topology& t, const FragmentSpec& f) {
  if (f.kind != FragmentKind::operators) return kNoHa;
  return f.ha.value_or(t.settings.ha);
}

// The most standbys a fragment of approach `a` may have: its traits' standbys_max, or, unset (an
// approach written elsewhere), the standbys it asks for.
std::size_t most_standbys(const ApproachTraits& a) { return std::max(a.standbys_max, a.standbys); }

// The standbys a fragment asks for (its own `standbys`, else the network's); 0 when its
// approach has none.
std::int64_t requested_standbys(const Topology& t, const FragmentSpec& f, const ApproachTraits* a) {
  if (a == nullptr || !a->has_standby()) return 0;
  return f.standbys != 0 ? f.standbys : t.settings.standbys;
}

// Topological order of a graph given by successor lists; when the graph has a cycle, returns
// one cycle (its nodes in edge order) instead. Kahn's algorithm, smallest ready index first, so
// the order is deterministic and follows the listing order where the edges allow it.
struct OrderOrCycle {
  std::vector<std::size_t> order;
  std::vector<std::size_t> cycle;
};
OrderOrCycle topological_order(const std::vector<std::vector<std::size_t>>& successors) {
  const std::size_t n = successors.size();
  std::vector<std::size_t> indegree(n, 0);
  for (const auto& succ : successors)
    for (std::size_t s : succ) ++indegree[s];
  std::set<std::size_t> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.insert(i);
  OrderOrCycle result;
  while (!ready.empty()) {
    const std::size_t v = *ready.begin();
    ready.erase(ready.begin());
    result.order.push_back(v);
    for (std::size_t s : successors[v])
      if (--indegree[s] == 0) ready.insert(s);
  }
  if (result.order.size() == n) return result;
  // Every node left has a predecessor that is left too (else its indegree would have reached
  // zero), so walking predecessors among them must revisit a node: that walk closes a cycle.
  std::vector<std::vector<std::size_t>> predecessors(n);
  for (std::size_t v = 0; v < n; ++v)
    for (std::size_t s : successors[v])
      if (indegree[v] > 0 && indegree[s] > 0) predecessors[s].push_back(v);
  std::size_t v = 0;
  while (indegree[v] == 0) ++v;
  std::vector<std::size_t> walk;
  std::map<std::size_t, std::size_t> position;
  while (position.find(v) == position.end()) {
    HAPAIR_CHECK_MSG(walk.size() <= n, "cycle walk longer than the graph: n=" << n);
    position[v] = walk.size();
    walk.push_back(v);
    HAPAIR_CHECK(!predecessors[v].empty());
    v = predecessors[v].front();
  }
  // walk[position[v]..] visits the cycle backwards along the edges.
  for (std::size_t i = walk.size(); i > position[v]; --i) result.cycle.push_back(walk[i - 1]);
  // Start the cycle at its first-listed node, so the message reads in listing order.
  std::rotate(result.cycle.begin(), std::min_element(result.cycle.begin(), result.cycle.end()), result.cycle.end());
  result.order.clear();
  return result;
}

// What produces a stream: a source fragment or an operator of a processing fragment.
struct Producer {
  std::size_t fragment = 0;
  std::optional<std::size_t> op;  // index into the fragment's operators; nullopt: the source
};

struct Validator {
  const Topology& t;
  const ApproachCatalog& approaches;
  std::vector<std::string> problems;

  std::string name_of(HaMode m) const {
    const ApproachTraits* a = approaches.find(m);
    return a != nullptr ? a->name : "approach " + std::to_string(static_cast<int>(m));
  }
  // Every approach the topology names is one the catalog knows.
  void known_approaches() {
    auto check = [&](const std::string& where, const std::string& what, HaMode m) {
      if (approaches.find(m) == nullptr)
        add(where, what + " = " + name_of(m) + ": not an approach of this build (allowed: " + approaches.names() + ")");
    };
    check(t.settings.where, "ha", t.settings.ha);
    for (const FragmentSpec& f : t.fragments)
      if (f.ha) check(f.where, describe(f) + ": ha", *f.ha);
  }

  std::string place(const std::string& where) const {
    if (!where.empty()) return where;
    return t.source_file.empty() ? "built-in default" : t.source_file;
  }
  void add(const std::string& where, const std::string& what) { problems.push_back(place(where) + ": " + what); }

  static std::string describe(const FragmentSpec& f) {
    switch (f.kind) {
      case FragmentKind::source: return "source '" + f.name + "'";
      case FragmentKind::sink: return "sink '" + f.name + "'";
      case FragmentKind::operators: break;
    }
    return "fragment '" + f.name + "'";
  }
  static std::string describe(const OperatorSpec& op) { return "operator '" + op.name + "'"; }
  std::string where_of(const Producer& p) const {
    const FragmentSpec& f = t.fragments[p.fragment];
    return p.op ? f.operators[*p.op].where : f.where;
  }
  std::string describe(const Producer& p) const {
    const FragmentSpec& f = t.fragments[p.fragment];
    return p.op ? describe(f.operators[*p.op]) : describe(f);
  }

  void settings() {
    const Settings& s = t.settings;
    const std::string w = s.where;
    auto range = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < lo || v > hi) add(w, std::string("[network] ") + key + " = " + num(v) + ": must be in " + num(lo) + ".." + num(hi));
    };
    auto at_least = [&](const char* key, std::int64_t v, std::int64_t lo) {
      if (v < lo) add(w, std::string("[network] ") + key + " = " + num(v) + ": must be >= " + num(lo));
    };
    auto positive_seconds = [&](const char* key, double v) {
      if (!(v > 0.0) || !finite(v)) add(w, std::string("[network] ") + key + " = " + num(v) + ": must be a finite number of seconds > 0");
    };
    positive_seconds("duration_s", s.duration_s);
    range("batch_tuples", s.batch_tuples, 1, kBatchTuplesMax);
    at_least("batch_flush_ms", s.batch_flush_ms, 1);
    at_least("heartbeat_interval_ms", s.heartbeat_interval_ms, 1);
    at_least("failure_timeout_ms", s.failure_timeout_ms, 1);
    if (s.failure_timeout_ms <= s.heartbeat_interval_ms)
      add(w, "[network] failure_timeout_ms = " + num(s.failure_timeout_ms) + ": must be > heartbeat_interval_ms (" +
                 num(s.heartbeat_interval_ms) + "), or every heartbeat gap looks like a failure");
    if (s.hang_timeout_ms <= s.heartbeat_interval_ms)
      add(w, "[network] hang_timeout_ms = " + num(s.hang_timeout_ms) + ": must be > heartbeat_interval_ms (" +
                 num(s.heartbeat_interval_ms) + "), or every heartbeat gap looks like a hang");
    at_least("ack_interval_ms", s.ack_interval_ms, 1);
    at_least("checkpoint_interval_ms", s.checkpoint_interval_ms, 1);
    range("checkpoint_chunk_bytes", s.checkpoint_chunk_bytes, kCheckpointChunkBytesMin, kCheckpointChunkBytesMax);
    at_least("output_queue_tuples_max", s.output_queue_tuples_max, 1);
    at_least("input_queue_tuples_max", s.input_queue_tuples_max, 1);
    at_least("inflight_tuples_max", s.inflight_tuples_max, 1);
    if (s.inflight_tuples_max < s.batch_tuples)
      add(w, "[network] inflight_tuples_max = " + num(s.inflight_tuples_max) + ": must be >= batch_tuples (" +
                 num(s.batch_tuples) + "), or a full batch could never be sent");
    if (s.input_queue_tuples_max >= 1 && s.inflight_tuples_max > s.input_queue_tuples_max)
      add(w, "[network] inflight_tuples_max = " + num(s.inflight_tuples_max) + ": must be <= input_queue_tuples_max (" +
                 num(s.input_queue_tuples_max) + "), or a producer may send more than its consumer queues");
    at_least("conservative_retention_ms", s.conservative_retention_ms, 1);
    positive_seconds("drain_timeout_s", s.drain_timeout_s);
    positive_seconds("drain_quiet_s", s.drain_quiet_s);
    at_least("retransmit_timeout_ms", s.retransmit_timeout_ms, 1);
    at_least("boundary_interval_ms", s.boundary_interval_ms, 1);
    at_least("hybrid_stall_ms", s.hybrid_stall_ms, 0);
    at_least("hybrid_input_queue_tuples", s.hybrid_input_queue_tuples, 0);
    at_least("hybrid_latency_ms", s.hybrid_latency_ms, 0);
    at_least("hybrid_calm_ms", s.hybrid_calm_ms, 1);
    at_least("hybrid_switch_at_ms", s.hybrid_switch_at_ms, -1);
    at_least("checkpoints_retained", s.checkpoints_retained, 1);
    if (!(s.operator_cost_us_per_tuple >= 0.0 && s.operator_cost_us_per_tuple <= kOperatorCostUsPerTupleMax))
      add(w, "[network] operator_cost_us_per_tuple = " + num(s.operator_cost_us_per_tuple) +
                 ": must be a number of microseconds in [0, " + num(kOperatorCostUsPerTupleMax) + "]");
  }

  void sim() {
    const SimSettings& s = t.sim;
    const std::string w = s.where;
    auto non_negative = [&](const char* key, double v) {
      if (!(v >= 0.0) || !finite(v)) add(w, std::string("[sim] ") + key + " = " + num(v) + ": must be a finite number >= 0");
    };
    auto positive = [&](const char* key, double v) {
      if (!(v > 0.0) || !finite(v)) add(w, std::string("[sim] ") + key + " = " + num(v) + ": must be a finite number > 0");
    };
    auto ratio = [&](const char* key, double v) {
      if (!(v >= 0.0 && v <= 1.0)) add(w, std::string("[sim] ") + key + " = " + num(v) + ": must be a ratio in [0, 1]");
    };
    non_negative("link_latency_ms", s.link_latency_ms);
    non_negative("link_jitter_ms", s.link_jitter_ms);
    positive("bandwidth_bytes_per_s", s.bandwidth_bytes_per_s);
    ratio("loss_ratio", s.loss_ratio);
    ratio("duplication_ratio", s.duplication_ratio);
    ratio("reorder_ratio", s.reorder_ratio);
    non_negative("cpu_us_per_tuple", s.cpu_us_per_tuple);
    non_negative("cpu_us_per_message", s.cpu_us_per_message);
    positive("node_capacity", s.node_capacity);
  }

  // [links] and every [[link]]: each value in its range, each table naming a pair of nodes (or
  // fragments, or pinned hosts) that exists.
  void links() {
    const LinkTable& table = t.links;
    link_values(table.where, "[links]", table.defaults);
    const LinkSettings& d = table.defaults;
    std::set<std::string> hosts;
    for (const FragmentSpec& f : t.fragments)
      for (const std::string* h : {&f.host, &f.standby_host})
        if (!h->empty()) hosts.insert(*h);
    for (const auto& [node, host] : t.placement) hosts.insert(host);
    for (const LinkSpec& l : table.links) {
      const bool by_name = !l.from.empty() || !l.to.empty();
      const bool by_host = !l.from_host.empty() || !l.to_host.empty();
      const std::string label = by_name   ? "[[link]] '" + l.from + "' -> '" + l.to + "'"
                                : by_host ? "[[link]] host '" + l.from_host + "' -> host '" + l.to_host + "'"
                                          : std::string("[[link]]");
      if (by_name == by_host) {
        add(l.where, label + ": give either from and to (node or fragment names) or from_host and to_host (pinned hosts)");
      } else if (by_name) {
        for (const std::string* n : {&l.from, &l.to})
          if (!names_node_or_fragment(*n))
            add(l.where, label + ": '" + *n + "' is neither a fragment nor a node of the network; allowed: " + node_and_fragment_names());
      } else {
        // A topology that pins nothing leaves every node to the placement of a hosts file
        // (--hosts), which the effective topology's [placement] then names; one that pins
        // nodes names its hosts by those pins (link_warnings says when a table matches nothing).
        for (const std::string* h : {&l.from_host, &l.to_host})
          if (!hosts.empty() && hosts.count(*h) == 0)
            add(l.where, label + ": no node is pinned to host '" + *h + "' (pin nodes with a fragment's host or standby_host)" +
                             (hosts.empty() ? std::string() : "; pinned hosts: " + join(hosts)));
      }
      LinkSettings merged = d;
      apply_link_override(merged, l.settings);
      link_values(l.where, label, merged, &l.settings);
    }
  }

  // `given`: check only the keys a [[link]] gives (the others were checked in [links]).
  void link_values(const std::string& w, const std::string& label, const LinkSettings& s, const LinkOverride* given = nullptr) {
    auto check = [&](bool is_given, bool ok, const char* key, const std::string& value, const std::string& allowed) {
      if (is_given && !ok) add(w, label + " " + key + " = " + value + ": must be " + allowed);
    };
    auto delay = [&](bool is_given, const char* key, double v) {
      check(is_given, v >= 0.0 && v <= kLinkDelayMsMax, key, num(v), "a number of milliseconds in [0, " + num(kLinkDelayMsMax) + "]");
    };
    auto ratio = [&](bool is_given, const char* key, double v) {
      check(is_given, v >= 0.0 && v <= 1.0, key, num(v), "a ratio in [0, 1]");
    };
    delay(!given || given->latency_ms.has_value(), "latency_ms", s.latency_ms);
    delay(!given || given->jitter_ms.has_value(), "jitter_ms", s.jitter_ms);
    ratio(!given || given->loss_ratio.has_value(), "loss_ratio", s.loss_ratio);
    ratio(!given || given->duplication_ratio.has_value(), "duplication_ratio", s.duplication_ratio);
    check(!given || given->bandwidth_bytes_per_s.has_value(), s.bandwidth_bytes_per_s >= 0.0 && finite(s.bandwidth_bytes_per_s),
          "bandwidth_bytes_per_s", num(s.bandwidth_bytes_per_s), "a finite number of bytes per second > 0, or 0 for no limit");
    check(!given || given->queue_messages_max.has_value(), s.queue_messages_max >= 1 && s.queue_messages_max <= kLinkQueueMessagesMax,
          "queue_messages_max", num(s.queue_messages_max), "in 1.." + num(kLinkQueueMessagesMax));
    check(!given || given->queue_bytes_max.has_value(),
          s.queue_bytes_max >= kLinkQueueBytesMin && s.queue_bytes_max <= kLinkQueueBytesMax, "queue_bytes_max",
          num(s.queue_bytes_max), "in " + num(kLinkQueueBytesMin) + ".." + num(kLinkQueueBytesMax));
    // A message larger than the queue could never cross an emulated link: a checkpoint chunk is
    // the largest one a node sends.
    const std::int64_t chunk = t.settings.checkpoint_chunk_bytes;
    check((!given || given->queue_bytes_max.has_value()) && s.emulated(),
          s.queue_bytes_max < kLinkQueueBytesMin || s.queue_bytes_max > chunk, "queue_bytes_max", num(s.queue_bytes_max),
          "> checkpoint_chunk_bytes (" + num(chunk) + "), or a checkpoint chunk could never cross the link");
  }

  // A fragment's name (every node that runs it) or a node's: a fragment's name with the standby
  // suffix of its approach.
  // Every node of a fragment: its own name and its standbys'.
  std::vector<std::string> node_names(const FragmentSpec& f) const {
    std::vector<std::string> out{f.name};
    const ApproachTraits* a = approaches.find(effective_ha(t, f));
    const std::int64_t k = std::clamp<std::int64_t>(requested_standbys(t, f, a), 0, kStandbysMax);
    for (std::int64_t i = 0; i < k; ++i) out.push_back(standby_node_name(f.name, a->standby_suffix, static_cast<std::size_t>(i)));
    return out;
  }
  bool names_node_or_fragment(const std::string& n) const {
    for (const FragmentSpec& f : t.fragments)
      for (const std::string& name : node_names(f))
        if (name == n) return true;
    return false;
  }
  std::string node_and_fragment_names() const {
    std::vector<std::string> out;
    for (const FragmentSpec& f : t.fragments)
      for (const std::string& name : node_names(f)) out.push_back(name);
    std::string text;
    for (const std::string& s : out) text += (text.empty() ? "" : ", ") + s;
    return text;
  }
  static std::string join(const std::set<std::string>& items) {
    std::string text;
    for (const std::string& s : items) text += (text.empty() ? "" : ", ") + s;
    return text;
  }

  void source(const FragmentSpec& f) {
    const SourceSpec& s = f.source;
    const std::string d = describe(f);
    auto rate = [&](const char* key, double v) {
      if (!(v > 0.0 && v <= kRateTpsMax)) add(f.where, d + ": " + key + " = " + num(v) + ": must be > 0 and <= " + num(kRateTpsMax));
    };
    auto count = [&](const char* key, std::int64_t v, std::int64_t max) {
      if (v < 1 || v > max) add(f.where, d + ": " + key + " = " + num(v) + ": must be 1 to " + num(max));
    };
    // fields = "KEY,VALUE": each a field of what the generator emits.
    auto fields = [&](const std::string& key, const std::string& value, const std::vector<std::string>& allowed,
                      const std::string& of, const std::string& allowed_text) {
      for (const std::string* field : {&key, &value})
        if (std::find(allowed.begin(), allowed.end(), *field) == allowed.end())
          add(f.where, d + ": fields = \"" + key + "," + value + "\": '" + *field + "' is not a field of " + of +
                           "; allowed fields: " + allowed_text);
    };
    switch (s.generator) {
      case SourceGeneratorKind::uniform: {
        rate("rate_tps", s.rate_tps);
        if (s.key_count < 1) add(f.where, d + ": key_count = " + num(s.key_count) + ": must be >= 1");
        const ValueDistribution& v = s.values;
        switch (v.kind) {
          case DistributionKind::uniform:
            if (!finite(v.a) || !finite(v.b) || !(v.b > v.a))
              add(f.where, d + ": values = uniform(" + num(v.a) + ", " + num(v.b) + "): needs finite bounds with max > min");
            break;
          case DistributionKind::normal:
            if (!finite(v.a) || !finite(v.b) || !(v.b >= 0.0))
              add(f.where, d + ": values = normal(" + num(v.a) + ", " + num(v.b) + "): needs a finite mean and a finite stddev >= 0");
            break;
          case DistributionKind::exponential:
            if (!finite(v.a) || !(v.a > 0.0))
              add(f.where, d + ": values = exponential(" + num(v.a) + "): needs a finite mean > 0");
            break;
        }
        break;
      }
      case SourceGeneratorKind::nexmark: {
        const NexmarkSpec& n = s.nexmark;
        rate("events_per_s", n.events_per_s);
        fields(n.key_field, n.value_field, nexmark_field_names(n.event), std::string("a NEXMark ") + to_string(n.event),
               allowed_nexmark_fields(n.event));
        count("hot_auction_ratio", n.hot_auction_ratio, kNexmarkCountMax);
        count("hot_sellers_ratio", n.hot_sellers_ratio, kNexmarkCountMax);
        count("hot_bidders_ratio", n.hot_bidders_ratio, kNexmarkCountMax);
        count("num_in_flight_auctions", n.num_in_flight_auctions, kNexmarkCountMax);
        count("num_active_people", n.num_active_people, kNexmarkCountMax);
        break;
      }
      case SourceGeneratorKind::ysb: {
        rate("rate_tps", s.rate_tps);
        fields(s.ysb.key_field, s.ysb.value_field, ysb_field_names(), "a YSB ad event", allowed_ysb_fields());
        count("campaigns", s.ysb.campaigns, kYsbCountMax);
        count("ads_per_campaign", s.ysb.ads_per_campaign, kYsbCountMax);
        break;
      }
    }
    const RateSpikes& sp = s.spikes;
    if (sp.on() || sp != RateSpikes{}) {
      if (s.generator == SourceGeneratorKind::nexmark)
        add(f.where, d + ": spike_every_s: rate spikes apply to uniform and ysb sources; a nexmark source's rate is its "
                         "event sequence's (events_per_s)");
      if (!(sp.every_s > 0.0 && sp.every_s <= 86400.0))
        add(f.where, d + ": spike_every_s = " + num(sp.every_s) + ": must be > 0 and <= 86400 when a spike_* key is set");
      if (!(sp.length_s > 0.0 && sp.length_s < sp.every_s))
        add(f.where, d + ": spike_length_s = " + num(sp.length_s) + ": must be > 0 and < spike_every_s (" + num(sp.every_s) + ")");
      if (!(sp.factor > 0.0 && sp.factor <= 1000.0) || sp.factor * source_rate_setting(s) > kRateTpsMax)
        add(f.where, d + ": spike_factor = " + num(sp.factor) + ": must be > 0 and <= 1000, and rate_tps x spike_factor <= " +
                         num(kRateTpsMax));
      if (!(sp.first_s >= 0.0 && sp.first_s <= 86400.0))
        add(f.where, d + ": spike_first_s = " + num(sp.first_s) + ": must be >= 0 and <= 86400");
    }
    if (!f.operators.empty()) add(f.where, d + ": a source has no operators");
    if (!f.sink_inputs.empty()) add(f.where, d + ": a source reads no streams");
  }

  // The nexmark sources of a network are views of one event sequence (their streams line up in
  // time and their ids refer to each other), so what shapes the sequence is the same in all.
  void nexmark_sequence() {
    const FragmentSpec* first = nullptr;
    for (const FragmentSpec& f : t.fragments) {
      if (f.kind != FragmentKind::source || f.source.generator != SourceGeneratorKind::nexmark) continue;
      if (first == nullptr) {
        first = &f;
        continue;
      }
      const NexmarkSpec& a = first->source.nexmark;
      const NexmarkSpec& b = f.source.nexmark;
      // A value out of its range is reported by source() already, and not compared.
      auto same = [&](const char* key, double mine, double theirs, double max) {
        const bool valid = mine > 0.0 && mine <= max && theirs > 0.0 && theirs <= max;
        if (valid && mine != theirs)
          add(f.where, describe(f) + ": " + key + " = " + num(mine) + " differs from " + describe(*first) + "'s " + num(theirs) +
                           " at " + place(first->where) + "; the nexmark sources of a network share one event sequence");
      };
      const auto count_max = static_cast<double>(kNexmarkCountMax);
      same("events_per_s", b.events_per_s, a.events_per_s, kRateTpsMax);
      same("hot_auction_ratio", static_cast<double>(b.hot_auction_ratio), static_cast<double>(a.hot_auction_ratio), count_max);
      same("hot_sellers_ratio", static_cast<double>(b.hot_sellers_ratio), static_cast<double>(a.hot_sellers_ratio), count_max);
      same("hot_bidders_ratio", static_cast<double>(b.hot_bidders_ratio), static_cast<double>(a.hot_bidders_ratio), count_max);
      same("num_in_flight_auctions", static_cast<double>(b.num_in_flight_auctions), static_cast<double>(a.num_in_flight_auctions),
           count_max);
      same("num_active_people", static_cast<double>(b.num_active_people), static_cast<double>(a.num_active_people), count_max);
    }
  }

  void op(const FragmentSpec& f, const OperatorSpec& o) {
    const std::string d = describe(o) + " (" + to_string(o.kind) + " in fragment '" + f.name + "')";
    if (!valid_name(o.name)) add(o.where, d + ": the name must be 1 to 64 letters, digits, '_' or '-'");
    const std::size_t n = o.inputs.size();
    const OperatorTraits* traits = OperatorCatalog::builtin().find(o.kind);
    if (traits == nullptr) {
      add(o.where, d + ": not an operator type of this build (allowed: " + allowed_operator_kinds() + ")");
      return;
    }
    if (n < traits->inputs_min || n > traits->inputs_max) {
      const std::string reads = traits->inputs_min == traits->inputs_max
                                    ? "exactly " + std::to_string(traits->inputs_min) +
                                          (o.kind == OperatorKind::join ? " (left, right)" : "")
                                    : "at least " + std::to_string(traits->inputs_min);
      add(o.where, d + ": has " + std::to_string(n) + " inputs; a " + traits->name + " reads " + reads);
    }
    if (o.output.empty()) add(o.where, d + ": has no output stream");
    // The knobs its traits declare: within their range, whole where they must be.
    for (const auto& [key, v] : o.params) {
      const OperatorParam* p = traits->param(key);
      if (p == nullptr) {
        add(o.where, d + ": " + key + " is not a knob of a " + traits->name);
        continue;
      }
      if (!finite(v) || v < p->min || v > p->max || (p->whole && std::floor(v) != v))
        add(o.where, d + ": " + key + " = " + num(v) + ": must be " + (p->whole ? "a whole number " : "a number ") + "in [" +
                         num(p->min) + ", " + num(p->max) + "]");
    }
    switch (o.kind) {
      case OperatorKind::filter:
        if (!finite(o.filter_constant)) add(o.where, d + ": the filter constant " + num(o.filter_constant) + " is not finite");
        break;
      case OperatorKind::map:
        if (!finite(o.map_scale)) add(o.where, d + ": scale = " + num(o.map_scale) + ": must be finite");
        if (!finite(o.map_offset)) add(o.where, d + ": offset = " + num(o.map_offset) + ": must be finite");
        if (o.map_key_modulo < 0) add(o.where, d + ": key_modulo = " + num(o.map_key_modulo) + ": must be >= 0 (0: keep the key)");
        break;
      case OperatorKind::aggregate:
        if (o.window_ms <= 0) add(o.where, d + ": window_ms = " + num(o.window_ms) + ": must be > 0");
        if (o.slide_ms <= 0) add(o.where, d + ": slide_ms = " + num(o.slide_ms) + ": must be > 0");
        if (o.window_ms > 0 && o.slide_ms > 0) {
          if (o.window_ms % o.slide_ms != 0)
            add(o.where, d + ": window_ms = " + num(o.window_ms) + " is not a multiple of slide_ms = " + num(o.slide_ms));
          else if (o.window_ms / o.slide_ms > kWindowsPerTupleMax)
            add(o.where, d + ": window_ms / slide_ms = " + num(o.window_ms / o.slide_ms) + ": each tuple would fall into more than " +
                             num(kWindowsPerTupleMax) + " windows");
        }
        break;
      case OperatorKind::join:
        if (o.join_window_ms < 0) add(o.where, d + ": window_ms = " + num(o.join_window_ms) + ": must be >= 0");
        break;
      default: break;  // the operators with declared knobs are checked above
    }
  }

  void fragment(const FragmentSpec& f) {
    const std::string d = describe(f);
    if (!valid_name(f.name)) add(f.where, d + ": the name must be 1 to 64 letters, digits, '_' or '-'");
    if (f.kind != FragmentKind::operators) {
      if (f.ha && *f.ha != kNoHa)
        add(f.where, d + ": ha = " + name_of(*f.ha) + ": sources and sinks never get standbys (a source regenerates its tuples " +
                         "from the seed, a sink is the client application); leave ha unset or none");
      if (!f.standby_endpoint.empty())
        add(f.where, d + ": standby_endpoint is set, but sources and sinks never get standbys");
      if (!f.standby_host.empty()) add(f.where, d + ": standby_host is set, but sources and sinks never get standbys");
    }
    switch (f.kind) {
      case FragmentKind::source: source(f); break;
      case FragmentKind::sink:
        if (f.sink_inputs.empty()) add(f.where, d + ": reads no stream");
        if (!f.operators.empty()) add(f.where, d + ": a sink has no operators");
        break;
      case FragmentKind::operators:
        if (f.operators.empty()) add(f.where, d + ": has no operators");
        if (f.operators.size() > kOperatorsPerFragmentMax)
          add(f.where, d + ": has " + std::to_string(f.operators.size()) + " operators, at most " +
                           std::to_string(kOperatorsPerFragmentMax) + " are supported");
        if (!f.sink_inputs.empty()) add(f.where, d + ": sink inputs are set on a processing fragment");
        for (const OperatorSpec& o : f.operators) op(f, o);
        break;
    }
    standbys(f);
    for (const std::string* h : {&f.host, &f.standby_host})
      if (!h->empty() && !valid_name(*h))
        add(f.where, d + ": host '" + *h + "' must be the name of a host in the hosts file: 1 to 64 letters, digits, '_' or '-'");
    for (const std::string* e : {&f.endpoint, &f.standby_endpoint})
      if (!e->empty() && !valid_endpoint(*e))
        add(f.where, d + ": endpoint '" + *e + "' must look like tcp://HOST:PORT or tcp://HOST:*");
  }

  // k standbys: 1 to the approach's most (kStandbysMax for passive standby), and only where
  // the approach has a standby at all.
  void standbys(const FragmentSpec& f) {
    const ApproachTraits* a = approaches.find(effective_ha(t, f));
    if (a == nullptr) return;  // known_approaches() says why
    const std::string d = describe(f);
    if (!a->has_standby()) {
      if (f.standbys != 0)
        add(f.where, d + ": standbys = " + num(f.standbys) + ", but " +
                         (f.kind == FragmentKind::operators ? "ha = " + a->name + " has no standby"
                                                            : std::string("sources and sinks never get standbys")) +
                         "; leave standbys unset");
      return;
    }
    const std::int64_t k = requested_standbys(t, f, a);
    const auto most = static_cast<std::int64_t>(most_standbys(*a));
    if (k >= 1 && k <= most) return;
    // A [network] value outside 1..kStandbysMax is said once, by network_standbys().
    if (f.standbys == 0 && (k < 1 || k > static_cast<std::int64_t>(kStandbysMax))) return;
    const std::string which = f.standbys != 0 ? d + ": standbys = " + num(k) : d + ": [network] standbys = " + num(k);
    if (most <= 1)
      add(f.where, which + ": ha = " + a->name + " has exactly one " + (a->standby_holds_state ? "standby" : "recovery node") +
                       " per fragment (k standbys: ha = " + k_standby_approaches() + ", standbys = 1 to " +
                       std::to_string(kStandbysMax) + ")");
    else
      add(f.where, which + ": must be 1 to " + std::to_string(most) + " for ha = " + a->name);
  }
  std::string k_standby_approaches() const {
    std::string out;
    for (const ApproachTraits& a : approaches.all())
      if (most_standbys(a) > 1) out += (out.empty() ? "" : ", ") + a.name;
    return out.empty() ? std::string("none in this build") : out;
  }
  // [network] standbys applies to fragments whose approach has a standby; set on a network none
  // of whose fragments has one, it would silently mean nothing.
  void network_standbys() {
    const std::int64_t k = t.settings.standbys;
    if (k == 1) return;
    if (k < 1 || k > static_cast<std::int64_t>(kStandbysMax)) {
      add(t.settings.where, "[network] standbys = " + num(k) + ": must be 1 to " + std::to_string(kStandbysMax) +
                                " (k standbys per fragment; ha = " + k_standby_approaches() + ")");
      return;
    }
    for (const FragmentSpec& f : t.fragments) {
      const ApproachTraits* a = approaches.find(effective_ha(t, f));
      if (a != nullptr && a->has_standby()) return;
    }
    add(t.settings.where, "[network] standbys = " + num(k) + ", but no fragment has a standby (ha = none everywhere); " +
                              "k standbys need ha = " + k_standby_approaches());
  }

  void names() {
    std::map<std::string, std::string> fragment_where;
    std::map<std::string, std::string> operator_where;
    for (const FragmentSpec& f : t.fragments) {
      auto [it, fresh] = fragment_where.emplace(f.name, place(f.where));
      if (!fresh) add(f.where, describe(f) + ": the name is already used by a fragment defined at " + it->second);
      for (const OperatorSpec& o : f.operators) {
        auto [oit, ofresh] = operator_where.emplace(o.name, place(o.where));
        if (!ofresh) add(o.where, describe(o) + ": the name is already used by an operator defined at " + oit->second);
      }
    }
  }

  void endpoints() {
    // A node binds its endpoint, so two nodes cannot share one; tcp://HOST:* picks a free port
    // at bind time and may repeat.
    std::map<std::string, std::string> user;
    auto claim = [&](const std::string& e, const FragmentSpec& f, const char* which) {
      if (e.empty() || is_wildcard_endpoint(e)) return;
      const std::string me = describe(f) + " " + which;
      auto [it, fresh] = user.emplace(e, me + " at " + place(f.where));
      if (!fresh) add(f.where, me + " '" + e + "' is already used by the " + it->second);
    };
    for (const FragmentSpec& f : t.fragments) {
      claim(f.endpoint, f, "endpoint");
      claim(f.standby_endpoint, f, "standby_endpoint");
    }
  }

  // Streams: exactly one producer each, every read stream produced, every produced stream read,
  // and the fragment and operator graphs acyclic.
  void streams() {
    std::map<std::string, Producer> producers;
    auto produce = [&](const std::string& stream, Producer p) {
      if (stream.empty()) return;  // reported where the producer is checked
      if (!valid_name(stream))
        add(where_of(p), describe(p) + ": stream name '" + stream + "' must be 1 to 64 letters, digits, '_' or '-'");
      auto [it, fresh] = producers.emplace(stream, p);
      if (!fresh)
        add(where_of(p), describe(p) + ": stream '" + stream + "' is already produced by " + describe(it->second) +
                             " at " + place(where_of(it->second)) + "; a stream has exactly one producer");
    };
    for (std::size_t fi = 0; fi < t.fragments.size(); ++fi) {
      const FragmentSpec& f = t.fragments[fi];
      if (f.kind == FragmentKind::source) {
        if (f.source.stream.empty()) add(f.where, describe(f) + ": has no output stream");
        produce(f.source.stream, Producer{fi, std::nullopt});
      }
      if (f.kind == FragmentKind::operators)
        for (std::size_t oi = 0; oi < f.operators.size(); ++oi) produce(f.operators[oi].output, Producer{fi, oi});
    }

    std::set<std::string> read;
    std::vector<std::set<std::size_t>> fragment_successors(t.fragments.size());
    auto consume = [&](const std::vector<std::string>& inputs, std::size_t fi, const std::string& where,
                       const std::string& who) {
      std::set<std::string> seen;
      for (const std::string& s : inputs) {
        if (!seen.insert(s).second) add(where, who + ": reads stream '" + s + "' twice; read each stream once");
        auto it = producers.find(s);
        if (it == producers.end()) {
          add(where, who + ": input stream '" + s + "' is produced by no source or operator");
          continue;
        }
        read.insert(s);
        if (it->second.fragment != fi) fragment_successors[it->second.fragment].insert(fi);
      }
    };
    for (std::size_t fi = 0; fi < t.fragments.size(); ++fi) {
      const FragmentSpec& f = t.fragments[fi];
      if (f.kind == FragmentKind::sink) consume(f.sink_inputs, fi, f.where, describe(f));
      if (f.kind == FragmentKind::operators)
        for (const OperatorSpec& o : f.operators) consume(o.inputs, fi, o.where, describe(o));
    }
    for (const auto& [stream, p] : producers)
      if (read.count(stream) == 0)
        add(where_of(p), describe(p) + ": stream '" + stream + "' is read by no operator or sink");

    std::vector<std::vector<std::size_t>> succ;
    for (const auto& s : fragment_successors) succ.emplace_back(s.begin(), s.end());
    const OrderOrCycle fo = topological_order(succ);
    if (!fo.cycle.empty()) {
      std::string path;
      for (std::size_t v : fo.cycle) path += "'" + t.fragments[v].name + "' -> ";
      path += "'" + t.fragments[fo.cycle.front()].name + "'";
      add(t.fragments[fo.cycle.front()].where, "the fragments form a cycle: " + path + "; the query network must be a DAG");
    }
    for (std::size_t fi = 0; fi < t.fragments.size(); ++fi) operator_cycle(fi, producers);
  }

  void operator_cycle(std::size_t fi, const std::map<std::string, Producer>& producers) {
    const FragmentSpec& f = t.fragments[fi];
    if (f.kind != FragmentKind::operators) return;
    std::vector<std::vector<std::size_t>> succ(f.operators.size());
    for (std::size_t oi = 0; oi < f.operators.size(); ++oi)
      for (const std::string& s : f.operators[oi].inputs) {
        auto it = producers.find(s);
        if (it != producers.end() && it->second.fragment == fi && it->second.op) succ[*it->second.op].push_back(oi);
      }
    const OrderOrCycle oo = topological_order(succ);
    if (oo.cycle.empty()) return;
    std::string path;
    for (std::size_t v : oo.cycle) path += "'" + f.operators[v].name + "' -> ";
    path += "'" + f.operators[oo.cycle.front()].name + "'";
    add(f.operators[oo.cycle.front()].where, "the operators of " + describe(f) + " form a cycle: " + path);
  }

  // [[switch]]: an operator fragment of the network, an approach that can be switched live (and
  // the fragment's own one too), one standby, no arbitrary operator (its standby could not
  // replay the operator's choices across the switch), a time inside the run, one switch of a
  // fragment at a time.
  void switches() {
    const std::string allowed = switchable_names();
    std::map<std::pair<std::string, double>, int> at;
    for (const SwitchSpec& s : t.switches) {
      const std::string what = "switch of '" + s.fragment + "'";
      const auto it = std::find_if(t.fragments.begin(), t.fragments.end(), [&](const FragmentSpec& f) { return f.name == s.fragment; });
      if (it == t.fragments.end() || it->kind != FragmentKind::operators) {
        std::vector<std::string> names;
        for (const FragmentSpec& f : t.fragments)
          if (f.kind == FragmentKind::operators) names.push_back(f.name);
        add(s.where, what + ": no operator fragment of that name; the network's: " + join_names(names));
        continue;
      }
      if (!switchable(s.to))
        add(s.where, what + ": approach '" + name_of(s.to) + "' cannot be switched to live; allowed: " + allowed);
      const HaMode own = effective_ha(t, *it);
      if (!switchable(own))
        add(s.where, what + ": its approach '" + name_of(own) + "' cannot be switched live; allowed: " + allowed);
      const ApproachTraits* a = approaches.find(own);
      if (a != nullptr && switchable(own) && requested_standbys(t, *it, a) != 1)
        add(s.where, what + ": live switching needs standbys = 1, the fragment has " + std::to_string(requested_standbys(t, *it, a)));
      for (const OperatorSpec& o : it->operators)
        if (class_of(o) == OperatorClass::arbitrary) {
          add(s.where, what + ": its operator '" + o.name + "' is arbitrary; live switching needs a deterministic fragment");
          break;
        }
      if (!(s.at_s > 0.0) || !(s.at_s < t.settings.duration_s))
        add(s.where, what + ": at_s = " + shortest(s.at_s) + " must be after 0 and before duration_s = " + shortest(t.settings.duration_s));
      if (++at[{s.fragment, s.at_s}] == 2) add(s.where, what + ": two switches of one fragment at " + shortest(s.at_s) + " s");
    }
  }
  std::string switchable_names() const { return switchable_mode_names(approaches); }
  bool switchable(HaMode m) const { return switchable_mode(approaches, m); }
  static std::string join_names(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
    return out;
  }
  static std::string shortest(double v) { return shortest_text(v); }

  void run() {
    known_approaches();
    settings();
    sim();
    links();
    // The network name goes into result file names, so it may hold '.' but nothing odd.
    if (t.name.empty() || t.name.size() > 64 ||
        t.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string::npos)
      add(t.settings.where, "[network] name = '" + t.name + "': must be 1 to 64 letters, digits, '_', '-' or '.'");
    std::size_t sources = 0;
    std::size_t sinks = 0;
    for (const FragmentSpec& f : t.fragments) {
      sources += f.kind == FragmentKind::source;
      sinks += f.kind == FragmentKind::sink;
    }
    if (sources == 0) add(t.settings.where, "the network has no source; it needs at least one");
    if (sinks == 0) add(t.settings.where, "the network has no sink; it needs at least one");
    if (t.fragments.size() > kFragmentsMax)
      add(t.settings.where, "the network has " + std::to_string(t.fragments.size()) + " fragments, at most " +
                                std::to_string(kFragmentsMax) + " are supported");
    names();
    coordinator_name();
    network_standbys();
    for (const FragmentSpec& f : t.fragments) fragment(f);
    nexmark_sequence();
    endpoints();
    switches();
    streams();
    serializing_unions();
  }

  // A plan whose approaches need a coordinator names a node kCoordinatorNodeName: no node of a
  // fragment may be called so.
  void coordinator_name() {
    bool needed = false;
    for (const FragmentSpec& f : t.fragments) {
      const ApproachTraits* a = approaches.find(effective_ha(t, f));
      needed = needed || (a != nullptr && a->coordinator);
    }
    if (!needed) return;
    for (const FragmentSpec& f : t.fragments)
      for (const std::string& n : node_names(f))
        if (n == kCoordinatorNodeName)
          add(f.where, describe(f) + ": the node name '" + n + "' is the coordinator's (an approach of this network " +
                           "needs one); rename the fragment");
  }

  // A Union in timestamp order merges by timestamp, and a Top takes a window's results as they
  // come together: both need every input in timestamp order.
  void serializing_unions() {
    const std::map<std::string, bool> ordered = ordered_streams(t);
    for (const FragmentSpec& f : t.fragments)
      for (const OperatorSpec& o : f.operators) {
        const OperatorTraits* traits = OperatorCatalog::builtin().find(o.kind);
        if (traits == nullptr || traits->needs_ordered_inputs == nullptr || !traits->needs_ordered_inputs(o)) continue;
        for (const std::string& in : o.inputs) {
          auto it = ordered.find(in);
          if (it == ordered.end() || it->second) continue;  // an unknown input is reported elsewhere
          if (o.kind == OperatorKind::union_op)
            add(o.where, describe(o) + ": order = \"timestamp\" merges by timestamp, but input '" + in +
                             "' can go back in time (it comes after a Union in arrival order); make that Union's "
                             "order \"timestamp\" too, or this one's \"arrival\"");
          else
            add(o.where, describe(o) + ": a " + traits->name + " needs an input in timestamp order, but '" + in +
                             "' can go back in time (it comes after a Union in arrival order); give that Union "
                             "order = \"timestamp\"");
        }
      }
  }
};

}  // namespace

std::vector<NodeId> PlanFragment::replicas() const {
  std::vector<NodeId> out{primary};
  out.insert(out.end(), standbys.begin(), standbys.end());
  return out;
}

bool PlanFragment::is_replica(NodeId n) const {
  return n != kNoNode && (n == primary || std::find(standbys.begin(), standbys.end(), n) != standbys.end());
}

bool ordered_output(const OperatorSpec& op, const std::vector<bool>& inputs_ordered) {
  const OperatorTraits* t = OperatorCatalog::builtin().find(op.kind);
  return t != nullptr && t->ordered_output(op, inputs_ordered);  // an unknown type is reported by validate()
}

std::map<std::string, bool> ordered_streams(const Topology& t) {
  std::map<std::string, StreamSource> sources;
  for (const FragmentSpec& f : t.fragments) {
    if (f.kind == FragmentKind::source) sources[f.source.stream] = StreamSource{&f, nullptr};
    for (const OperatorSpec& o : f.operators) sources[o.output] = StreamSource{&f, &o};
  }
  std::map<std::string, bool> ordered;
  std::set<std::string> visiting;
  // Depth first from each stream to its producer's inputs (memoised; a stream met again while
  // its own order is being found lies on a cycle).
  std::function<bool(const std::string&)> visit = [&](const std::string& s) -> bool {
    if (auto it = ordered.find(s); it != ordered.end()) return it->second;
    auto src = sources.find(s);
    if (src == sources.end() || !visiting.insert(s).second) return false;
    bool o = true;
    if (src->second.op != nullptr) {
      std::vector<bool> ins;
      for (const std::string& in : src->second.op->inputs) ins.push_back(visit(in));
      o = ordered_output(*src->second.op, ins);
    }
    visiting.erase(s);
    ordered[s] = o;
    return o;
  };
  for (const auto& [name, src] : sources) visit(name);
  return ordered;
}

const ApproachTraits& Plan::traits(FragmentId f) const { return approaches.of(fragments.at(f).ha); }

std::optional<HaMode> Plan::scheduled_mode(FragmentId f, TimeUs now) const {
  std::optional<HaMode> mode;
  for (const PlanSwitch& s : switches)
    if (s.fragment == f && s.at_us <= now) mode = s.to;
  return mode;
}

TimeUs Plan::next_switch_us(FragmentId f, TimeUs now) const {
  for (const PlanSwitch& s : switches)
    if (s.fragment == f && s.at_us > now) return s.at_us;
  return kNever;
}

bool switchable_mode(const ApproachCatalog& approaches, HaMode mode) {
  const ApproachTraits* a = approaches.find(mode);
  return a != nullptr && a->has_standby() && !a->coordinator && a->promise.deterministic_network == RecoveryType::precise;
}

std::string switchable_mode_names(const ApproachCatalog& approaches) {
  std::string out;
  for (const ApproachTraits& a : approaches.all())
    if (switchable_mode(approaches, a.mode)) out += (out.empty() ? "" : ", ") + a.name;
  return out;
}

std::string standby_node_name(const std::string& fragment, const std::string& suffix, std::size_t index) {
  return fragment + suffix + (index == 0 ? std::string() : std::to_string(index + 1));
}

std::size_t PlanFragment::replica_index(NodeId n) const {
  if (n == primary) return 0;
  for (std::size_t i = 0; i < standbys.size(); ++i)
    if (standbys[i] == n) return i + 1;
  return standbys.size() + 1;
}

NodeId Plan::node_id(const std::string& name) const {
  for (const PlanNode& n : nodes)
    if (n.name == name) return n.id;
  return kNoNode;
}

FragmentId Plan::fragment_id(const std::string& name) const {
  for (const PlanFragment& f : fragments)
    if (f.name == name) return f.id;
  return kNoFragment;
}

StreamId Plan::stream_id(const std::string& name) const {
  for (const PlanStream& s : streams)
    if (s.name == name) return s.id;
  return kNoStream;
}

std::vector<std::string> validate(const Topology& t, const ApproachCatalog& approaches) {
  Validator v{t, approaches, {}};
  v.run();
  return v.problems;
}

Plan make_plan(const Topology& t, const ApproachCatalog& approaches) {
  const std::vector<std::string> problems = validate(t, approaches);
  HAPAIR_CHECK_MSG(problems.empty(), "make_plan() needs a topology validate() accepts; " << problems.size()
                                         << " problem(s), the first: " << problems.front());
  Plan plan;
  plan.topology = t;
  plan.approaches = approaches;
  for (const FragmentSpec& f : t.fragments)
    for (const OperatorSpec& o : f.operators)
      plan.boundaries = plan.boundaries || (o.kind == OperatorKind::union_op && o.union_order == UnionOrder::timestamp);
  const std::map<std::string, bool> ordered = ordered_streams(t);

  // Which fragment produces each stream, and the class of each stream inside its producer.
  std::map<std::string, FragmentId> producer_of;
  std::map<std::string, OperatorClass> class_in_producer;
  std::vector<std::string> definition_order;
  for (std::size_t fi = 0; fi < t.fragments.size(); ++fi) {
    const FragmentSpec& f = t.fragments[fi];
    const auto fid = static_cast<FragmentId>(fi);
    if (f.kind == FragmentKind::source) {
      producer_of[f.source.stream] = fid;
      class_in_producer[f.source.stream] = OperatorClass::repeatable;
      definition_order.push_back(f.source.stream);
    }
    if (f.kind != FragmentKind::operators) continue;
    std::map<std::string, std::size_t> local;  // stream -> producing operator
    for (std::size_t oi = 0; oi < f.operators.size(); ++oi) {
      local[f.operators[oi].output] = oi;
      producer_of[f.operators[oi].output] = fid;
      definition_order.push_back(f.operators[oi].output);
    }
    std::vector<std::vector<std::size_t>> succ(f.operators.size());
    for (std::size_t oi = 0; oi < f.operators.size(); ++oi)
      for (const std::string& s : f.operators[oi].inputs)
        if (auto it = local.find(s); it != local.end()) succ[it->second].push_back(oi);
    const OrderOrCycle oo = topological_order(succ);
    HAPAIR_CHECK_MSG(oo.cycle.empty(), "validated fragment '" << f.name << "' has an operator cycle");
    // Inputs from other fragments start a path as repeatable: the class of a stream says what
    // the producing fragment's own operators do to it.
    for (std::size_t oi : oo.order) {
      const OperatorSpec& o = f.operators[oi];
      OperatorClass c = class_of(o);
      for (const std::string& s : o.inputs)
        if (local.count(s) != 0) c = weaker(c, class_in_producer.at(s));
      class_in_producer[o.output] = c;
    }
  }

  for (std::size_t fi = 0; fi < t.fragments.size(); ++fi) {
    const FragmentSpec& f = t.fragments[fi];
    PlanFragment pf;
    pf.id = static_cast<FragmentId>(fi);
    pf.name = f.name;
    pf.kind = f.kind;
    pf.ha = effective_ha(t, f);
    pf.primary = static_cast<NodeId>(fi);
    pf.spec_index = fi;
    for (const OperatorSpec& o : f.operators) pf.klass = weaker(pf.klass, class_of(o));
    plan.fragments.push_back(pf);

    PlanNode node;
    node.id = static_cast<NodeId>(fi);
    node.name = f.name;
    node.fragment = pf.id;
    node.endpoint = f.endpoint;
    plan.nodes.push_back(node);
  }
  // The first standby of every fragment, then the further ones (k standbys), so that the node
  // ids of a plan with one standby per fragment stay what they always were.
  for (std::size_t i = 0; i < kStandbysMax; ++i)
    for (PlanFragment& pf : plan.fragments) {
      const ApproachTraits& approach = approaches.of(pf.ha);
      const FragmentSpec& f = t.fragments[pf.spec_index];
      const auto k = static_cast<std::size_t>(requested_standbys(t, f, &approach));
      HAPAIR_CHECK_MSG(k <= most_standbys(approach),
                       "fragment " << pf.name << " asks for " << k << " standbys, approach " << approach.name << " allows "
                                   << most_standbys(approach));
      if (i >= k) continue;
      PlanNode node;
      node.id = static_cast<NodeId>(plan.nodes.size());
      node.name = standby_node_name(pf.name, approach.standby_suffix, i);
      node.fragment = pf.id;
      node.standby = true;
      node.endpoint = i == 0 ? f.standby_endpoint : std::string();
      pf.standbys.push_back(node.id);
      plan.nodes.push_back(node);
    }

  for (const SwitchSpec& s : t.switches)
    plan.switches.push_back(PlanSwitch{plan.fragment_id(s.fragment), s.to, static_cast<TimeUs>(s.at_s * 1e6)});
  std::stable_sort(plan.switches.begin(), plan.switches.end(), [](const PlanSwitch& a, const PlanSwitch& b) { return a.at_us < b.at_us; });

  // The coordinator, last, so that every fragment's nodes keep the ids they always had.
  bool needs_coordinator = false;
  for (const PlanFragment& pf : plan.fragments) needs_coordinator = needs_coordinator || approaches.of(pf.ha).coordinator;
  if (needs_coordinator) {
    PlanNode node;
    node.id = static_cast<NodeId>(plan.nodes.size());
    node.name = kCoordinatorNodeName;
    plan.coordinator = node.id;
    plan.nodes.push_back(node);
  }

  // Each fragment's reads, in first-use order; the streams crossing fragments are the plan's.
  std::vector<std::vector<std::string>> reads(t.fragments.size());
  for (std::size_t fi = 0; fi < t.fragments.size(); ++fi) {
    const FragmentSpec& f = t.fragments[fi];
    auto note = [&](const std::string& s) {
      if (producer_of.at(s) == fi) return;
      for (const std::string& r : reads[fi])
        if (r == s) return;
      reads[fi].push_back(s);
    };
    for (const std::string& s : f.sink_inputs) note(s);
    for (const OperatorSpec& o : f.operators)
      for (const std::string& s : o.inputs) note(s);
  }
  for (const std::string& name : definition_order) {
    PlanStream ps;
    ps.name = name;
    ps.producer = producer_of.at(name);
    ps.producer_class = class_in_producer.at(name);
    ps.ordered = ordered.at(name);
    for (std::size_t fi = 0; fi < reads.size(); ++fi)
      for (const std::string& r : reads[fi])
        if (r == name) ps.consumers.push_back(static_cast<FragmentId>(fi));
    if (ps.consumers.empty()) continue;  // internal to its fragment
    ps.id = static_cast<StreamId>(plan.streams.size());
    plan.streams.push_back(ps);
  }

  auto add_unique = [](std::vector<FragmentId>& v, FragmentId f) {
    for (FragmentId x : v)
      if (x == f) return;
    v.push_back(f);
  };
  for (const PlanStream& ps : plan.streams) {
    PlanFragment& producer = plan.fragments[ps.producer];
    producer.outputs.push_back(ps.id);
    for (FragmentId c : ps.consumers) add_unique(producer.downstream, c);
  }
  for (std::size_t fi = 0; fi < reads.size(); ++fi)
    for (const std::string& r : reads[fi]) {
      const StreamId s = plan.stream_id(r);
      HAPAIR_CHECK_MSG(s != kNoStream, "stream '" << r << "' read across fragments is not in the plan");
      plan.fragments[fi].inputs.push_back(s);
      add_unique(plan.fragments[fi].upstream, plan.streams[s].producer);
    }
  return plan;
}

const std::string& host_of(const Plan& plan, NodeId node) {
  const PlanNode& n = plan.nodes.at(node);
  if (const auto placed = plan.topology.placement.find(n.name); placed != plan.topology.placement.end()) return placed->second;
  static const std::string kUnpinned;
  if (!plan.runs_fragment(n.id)) return kUnpinned;  // the coordinator of global checkpoints
  const FragmentSpec& spec = plan.spec(n.fragment);
  return n.standby ? spec.standby_host : spec.host;
}

}  // namespace hapair
