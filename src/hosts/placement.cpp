#include "hosts/placement.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "protocols/check.h"

namespace hapair {

const NodePlacement& Placement::of(NodeId n) const {
  HAPAIR_CHECK_MSG(n < nodes.size(), "node " << n << " of " << nodes.size());
  return nodes[n];
}

std::vector<NodeId> Placement::nodes_on(std::size_t host) const {
  std::vector<NodeId> out;
  for (const NodePlacement& p : nodes)
    if (p.host == host) out.push_back(p.node);
  return out;
}

std::string placement_role(const Plan& plan, NodeId n) {
  const PlanNode& node = plan.nodes.at(n);
  if (!plan.runs_fragment(n)) return node.name;  // the coordinator of global checkpoints
  const PlanFragment& f = plan.fragments.at(node.fragment);
  if (f.kind == FragmentKind::source) return "source";
  if (f.kind == FragmentKind::sink) return "sink";
  if (!node.standby) return "primary";
  std::string suffix = plan.traits(f.id).standby_suffix;
  if (!suffix.empty() && suffix.front() == '.') suffix.erase(0, 1);
  return suffix.empty() ? "standby" : suffix;
}

namespace {

std::string describe(const FragmentSpec& spec) {
  const char* kind = spec.kind == FragmentKind::source ? "source" : spec.kind == FragmentKind::sink ? "sink" : "fragment";
  return std::string(kind) + " '" + spec.name + "'" + (spec.where.empty() ? "" : " (" + spec.where + ")");
}

std::string host_names(const HostList& hosts) {
  std::string out;
  for (const HostSpec& h : hosts.hosts) out += (out.empty() ? "" : ", ") + h.name;
  return out;
}

class Placer {
 public:
  Placer(const Plan& plan, const HostList& hosts)
      : plan_(plan), hosts_(hosts), host_of_(plan.nodes.size()), pinned_(plan.nodes.size(), false),
        load_(hosts.hosts.size(), 0) {}

  PlacementResult run() {
    refuse_endpoints();
    pin();
    if (!problems_.empty()) return PlacementResult{std::nullopt, problems_};
    for (const PlanFragment& f : plan_.fragments)
      for (NodeId n : f.replicas())
        if (!host_of_[n]) put(n, best_host(f, n));
    // A node of no fragment (the coordinator of global checkpoints) has no replicas to keep
    // apart from: the host with the fewest nodes, the first in the file on a tie.
    for (const PlanNode& node : plan_.nodes)
      if (!plan_.runs_fragment(node.id)) {
        const auto least = std::min_element(load_.begin(), load_.end());
        put(node.id, static_cast<std::size_t>(least - load_.begin()));
      }
    Placement placement;
    assign_ports(placement);
    if (!problems_.empty()) return PlacementResult{std::nullopt, problems_};
    warn_shared(placement);
    return PlacementResult{std::move(placement), {}};
  }

 private:
  // With hosts the placement derives every endpoint; a fixed one in the topology would bind an
  // address the node's host may not have.
  void refuse_endpoints() {
    for (const PlanFragment& f : plan_.fragments) {
      const FragmentSpec& spec = plan_.spec(f.id);
      for (const std::string* e : {&spec.endpoint, &spec.standby_endpoint})
        if (!e->empty())
          problems_.push_back(describe(spec) + ": endpoint '" + *e + "' is set, but with a hosts file the placement gives " +
                              "every node its endpoint; remove it (pin the fragment with host = \"NAME\" instead)");
    }
  }

  void pin() {
    for (const PlanFragment& f : plan_.fragments) {
      const FragmentSpec& spec = plan_.spec(f.id);
      pin_one(spec, "host", spec.host, {f.primary});
      // k standbys: the pin names the first; the others are spread by anti-affinity like any
      // unpinned replica (on hosts other than their primary's and each other's when there are).
      pin_one(spec, "standby_host", spec.standby_host,
              f.standbys.empty() ? std::vector<NodeId>{} : std::vector<NodeId>{f.standbys.front()});
    }
  }

  void pin_one(const FragmentSpec& spec, const char* key, const std::string& name, const std::vector<NodeId>& nodes) {
    if (name.empty()) return;
    const auto h = hosts_.index_of(name);
    if (!h) {
      problems_.push_back(describe(spec) + ": " + key + " = \"" + name + "\" is not a host of " +
                          (hosts_.source_file.empty() ? "the hosts file" : hosts_.source_file) + "; the hosts are: " +
                          host_names(hosts_));
      return;
    }
    for (NodeId n : nodes) {
      put(n, *h);
      pinned_[n] = true;
    }
  }

  void put(NodeId n, std::size_t h) {
    HAPAIR_CHECK_MSG(!host_of_[n], "node " << plan_.nodes[n].name << " placed twice");
    HAPAIR_CHECK_MSG(h < load_.size(), "host " << h << " of " << load_.size());
    host_of_[n] = h;
    ++load_[h];
  }

  bool same_rack(std::size_t a, std::size_t b) const {
    const std::string ra = hosts_.hosts[a].rack();
    return !ra.empty() && ra == hosts_.hosts[b].rack();
  }

  // The host for node n of fragment f: fewest replicas of f, then fewest of them in its rack,
  // then fewest nodes, then the first in the file.
  std::size_t best_host(const PlanFragment& f, NodeId n) const {
    using Key = std::tuple<int, int, int, std::size_t>;
    std::optional<Key> best;
    for (std::size_t h = 0; h < hosts_.hosts.size(); ++h) {
      int on_host = 0, in_rack = 0;
      for (NodeId other : f.replicas()) {
        if (other == n || !host_of_[other]) continue;
        if (*host_of_[other] == h) ++on_host;
        if (same_rack(*host_of_[other], h)) ++in_rack;
      }
      const Key key{on_host, in_rack, load_[h], h};
      if (!best || key < *best) best = key;
    }
    HAPAIR_CHECK(best.has_value());
    return std::get<3>(*best);
  }

  void assign_ports(Placement& placement) {
    std::vector<std::int64_t> next(hosts_.hosts.size());
    for (std::size_t h = 0; h < hosts_.hosts.size(); ++h) next[h] = hosts_.hosts[h].data_port_base;
    for (const PlanNode& node : plan_.nodes) {
      HAPAIR_CHECK_MSG(host_of_[node.id], "node " << node.name << " was not placed");
      const std::size_t h = *host_of_[node.id];
      const HostSpec& host = hosts_.hosts[h];
      const std::int64_t port = next[h]++;
      if (port > 65535) {
        problems_.push_back("host '" + host.name + "' (" + host.where + "): data_port_base " +
                            std::to_string(host.data_port_base) + " leaves no port for node " + node.name + " (" +
                            std::to_string(load_[h]) + " nodes from " + std::to_string(host.data_port_base) +
                            " pass 65535); choose a lower data_port_base");
        continue;
      }
      HAPAIR_CHECK(placement.nodes.size() == node.id);
      placement.nodes.push_back(NodePlacement{node.id, h, port, host_endpoint(host, port), pinned_[node.id]});
    }
  }

  // A sentence for every pair of one fragment's replicas on one host, or in one rack.
  void warn_shared(Placement& placement) const {
    // A host without a rack label is a rack of its own.
    std::set<std::string> racks;
    std::size_t unlabelled = 0;
    for (const HostSpec& h : hosts_.hosts) {
      if (h.rack().empty()) ++unlabelled;
      else racks.insert(h.rack());
    }
    const std::size_t rack_count = racks.size() + unlabelled;
    for (const PlanFragment& f : plan_.fragments) {
      const std::vector<NodeId> replicas = f.replicas();
      for (std::size_t i = 0; i < replicas.size(); ++i)
        for (std::size_t j = i + 1; j < replicas.size(); ++j) {
          const NodePlacement& a = placement.of(replicas[i]);
          const NodePlacement& b = placement.of(replicas[j]);
          const std::string pair = plan_.nodes[a.node].name + " and " + plan_.nodes[b.node].name;
          const std::string why = a.pinned && b.pinned ? "both are pinned there" : "";
          if (a.host == b.host) {
            const std::string reason = !why.empty() ? why
                                                    : "the hosts file has " + std::to_string(hosts_.hosts.size()) + " host" +
                                                          (hosts_.hosts.size() == 1 ? "" : "s") + " for " +
                                                          std::to_string(replicas.size()) + " replicas";
            placement.warnings.push_back("warning: " + pair + " share host " + hosts_.hosts[a.host].name + " (" + reason +
                                         "): losing that host loses " + lost_with(f));
          } else if (same_rack(a.host, b.host)) {
            const std::string reason = !why.empty() ? why
                                                    : rack_count < 2 ? "every host is in rack " + hosts_.hosts[a.host].rack()
                                                                     : "too few racks for " + std::to_string(replicas.size()) + " replicas";
            placement.warnings.push_back("warning: " + pair + " share rack " + hosts_.hosts[a.host].rack() + " (" + reason +
                                         "): losing that rack loses " + lost_with(f));
          }
        }
    }
  }

  // What losing two replicas of f loses: the fragment (a pair), or two of its k + 1 replicas.
  static std::string lost_with(const PlanFragment& f) {
    const std::size_t n = f.replicas().size();
    return n <= 2 ? "fragment " + f.name : "two of the " + std::to_string(n) + " replicas of fragment " + f.name;
  }

  const Plan& plan_;
  const HostList& hosts_;
  std::vector<std::optional<std::size_t>> host_of_;  // by NodeId
  std::vector<bool> pinned_;
  std::vector<int> load_;  // nodes per host
  std::vector<std::string> problems_;
};

}  // namespace

PlacementResult place_nodes(const Plan& plan, const HostList& hosts) {
  const std::vector<std::string> host_problems = validate_hosts(hosts);
  HAPAIR_CHECK_MSG(host_problems.empty(), "place_nodes needs a valid host list: " << host_problems.front());
  return Placer(plan, hosts).run();
}

}  // namespace hapair
