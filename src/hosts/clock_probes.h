// Clock probes over the control channel (docs/HOSTS.md, "Clock offsets"): the launcher sends
// every node a ClockRequest (t1, its clock), the node answers at once with a ClockReply (t2 when
// it read the request, t3 when it answered, by its own clock), the launcher notes t4 on arrival.
// A round sends each reachable node `probes_per_target` probes one after the other; each host's
// estimate of the round is the best probe (the smallest round trip, clock_offset.h) of all its
// nodes' probes, since the nodes of one host share its clock. The launcher runs a round before
// the run starts and one every probe interval while it runs.
//
// What a run does with the rounds (host_summary): every time a node on a host reports is put on
// the launcher's clock by the FIRST round's estimate when that excludes 0 (else by nothing:
// correcting by an estimate that admits 0 only adds its error); the error that remains is what
// every round says about that correction: max over rounds of |offset_r - correction| + bound_r.
// A clock that drifts or steps during the run widens it; nothing is hidden.
//
// Paper: none; Hwang et al. (ICDE 2005) measure on one clock. NTP (RFC 5905, section 8).
//
// Pure: the caller reads the clocks and moves the messages (launcher.cpp). Invariants: at most
// one probe per target is outstanding; a reply that is not the one outstanding (late, repeated,
// from a target written off) is counted and dropped, never used; a probe not answered within
// reply_timeout_us is written off; a round ends when every target has had its probes or was
// written off.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "hosts/clock_offset.h"
#include "protocols/messages.h"

namespace hapair {

struct ClockProbesConfig {
  std::size_t probes_per_target = 4;        // per round, one after the other
  std::int64_t reply_timeout_us = 500'000;  // a probe not answered by then is lost
};

// One host's result of one round.
struct HostClockRound {
  std::optional<ClockOffset> estimate;  // nullopt: no usable probe
  std::size_t used = 0;                 // probes whose timestamps made sense
  std::size_t dropped = 0;              // answered, but their timestamps went backwards
  std::size_t lost = 0;                 // not answered in time
};

struct ClockRound {
  std::int64_t began_us = 0;  // the launcher's probe clock when the round began
  std::vector<HostClockRound> hosts;
};

// What a run applies for one host and the error that remains (see the header comment).
struct HostClockSummary {
  std::optional<ClockOffset> first;           // the first round's estimate
  std::int64_t correction_us = 0;             // subtracted from the host's times
  std::optional<std::int64_t> error_bound_us; // nullopt: no round gave an estimate
};

class ClockProbes {
 public:
  // target_host[t]: the host (0 .. hosts-1) of probe target t (a node).
  ClockProbes(std::vector<std::size_t> target_host, std::size_t hosts, ClockProbesConfig config);

  // Starts a round at now_us (none may be under way).
  void begin_round(std::int64_t now_us);
  bool round_under_way() const { return under_way_; }
  // A target that cannot answer (killed, paused) gets no probes; its outstanding one is written
  // off at once. Reachable again (restarted, resumed): it is probed from the next round on.
  void set_reachable(std::size_t target, bool reachable);

  struct Send {
    std::size_t target = 0;
    ClockRequest request;
  };
  // The requests to send now, each with t1 = now_us (read just before sending them). Also
  // writes off the probes older than reply_timeout_us and ends the round when nothing is left.
  std::vector<Send> due(std::int64_t now_us);
  // A reply from `target` that arrived at t4_us (the launcher's probe clock).
  void on_reply(std::size_t target, const ClockReply& reply, std::int64_t t4_us);

  const std::vector<ClockRound>& rounds() const { return rounds_; }
  std::size_t stray_replies() const { return stray_; }
  HostClockSummary host_summary(std::size_t host) const;
  // The error of a time difference between two hosts: the sum of the two largest remaining
  // bounds (one host: its own). nullopt when a host that runs a node has no estimate.
  std::optional<std::int64_t> run_error_bound_us() const;

 private:
  struct Target {
    std::size_t host = 0;
    bool reachable = true;
    std::size_t sent = 0;                      // probes of this round
    std::optional<std::uint64_t> outstanding;  // its sequence
    std::int64_t outstanding_since_us = 0;
  };
  void finish_round();

  std::vector<Target> targets_;
  std::size_t hosts_;
  ClockProbesConfig config_;
  std::vector<ClockRound> rounds_;
  std::vector<ClockOffsetEstimator> estimators_;  // per host, this round
  bool under_way_ = false;
  std::uint64_t next_sequence_ = 1;
  std::size_t stray_ = 0;
};

}  // namespace hapair
