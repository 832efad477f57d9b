// The node process host: what `hapair node` runs. It hosts one node of a plan (a source, a
// sink, a fragment primary or a standby) as an OS process: it binds the node's data socket,
// registers with the launcher, waits for the directory and the run epoch, and then drives the
// node's pure core over the ZeroMQ transport until the launcher stops it.
//
// Paper: one process is one "server" of the query network (section 2); killing it with SIGKILL
// is the fail-stop crash every recovery approach must survive (section 4).
//
// Control plane (ARCHITECTURE.md): DEALER to the launcher's ROUTER; Hello out, Directory in;
// then TraceBatch (promptly), DeliveryBatch (sinks: every delivery_flush_us or
// delivery_batch_max deliveries, and end_of_output once the core finished) and NodeStats
// (every stats_interval_us, and final=true at exit) out; StopRun and Kill in; a ClockRequest is
// answered at once with a ClockReply (the node's clock, NTP-style; docs/HOSTS.md).
//
// Invariants: one zmq::context per process, created here and passed down; every delivery the
// core produced is reported before end_of_output and before the final stats; the process exits
// 0 only after StopRun.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "protocols/core.h"
#include "protocols/plan.h"
#include "runtime/core_runner.h"
#include "runtime/curve.h"
#include "runtime/transport.h"

namespace hapair {

struct NodeProcessOptions {
  // The plan, already loaded and validated by the caller (the cli loads the topology file: the
  // parser lives in the harness, a layer above the runtime).
  std::shared_ptr<const Plan> plan;
  std::string topology_path;  // where the plan came from, for messages only
  std::string node_name;
  std::string control_endpoint;  // the launcher's ROUTER
  // Where the data socket binds. Empty: the plan's endpoint for this node, and when that is
  // empty too, tcp://127.0.0.1:* (a free port, announced in Hello).
  std::string bind_endpoint;
  // The process replaces one that crashed (`hapair node --rejoin`): its core gets
  // Start{restarted = true} and rejoins its fragment as the standby of the current primary. The
  // launcher binds it to the endpoint its first incarnation announced, so every peer's
  // connection to that address comes back by itself.
  bool rejoin = false;
  // Where the crash line listens (tcp://HOST:PORT). Empty: the data endpoint's host, a free
  // port (announced in Hello); a restarted node gets its first incarnation's.
  std::string crash_line_bind;
  double directory_timeout_s = 30.0;  // how long to wait for the launcher's Directory
  // The node runs on another host under the launcher's ssh session (`hapair node
  // --exit-on-stdin-eof`): stdin is that session's, nothing is ever written to it, and its end
  // means the launcher (or its connection) is gone, so the node exits at once
  // (kNodeExitLauncherGone) instead of running on without anyone to stop it.
  bool exit_on_stdin_eof = false;
  // A test's injected clock offset: the node's clock reads this much ahead of its host's (its run
  // clock, its reports and its answers to clock probes), as a host whose clock is off would.
  // Set from HAPAIR_TEST_CLOCK_SHIFT_US by `hapair node`; 0 in every real run.
  std::int64_t clock_shift_us = 0;
  // CURVE (runtime/curve.h, docs/HOSTS.md "Only the run's own processes get in"): the run's keys,
  // read from the first line of stdin before anything else (`hapair node --keys-from-stdin`; the
  // launcher writes them there, over ssh for other hosts), or given here. With keys, every socket
  // of the node is CURVE and only the run's client key gets into its data inbox.
  bool keys_from_stdin = false;
  CurveKeys curve;
  TransportConfig transport;          // bind_endpoint and log_name are overwritten from the above
  CoreRunnerConfig runner;
  CoreFactory core_factory;  // empty: make_node_core (node/node_factory.h)
  TimeUs stats_interval_us = 100'000;
  TimeUs delivery_flush_us = 10'000;
  std::size_t delivery_batch_max = 1'000;
  // A control send that cannot be queued for this long is counted (control_send_failed) and
  // dropped, so a stuck launcher cannot freeze the node.
  int control_send_timeout_ms = 2'000;
};

// The largest injected clock offset (NodeProcessOptions::clock_shift_us): a day.
inline constexpr std::int64_t kClockShiftMaxUs = 86'400'000'000;

// Exit statuses of run_node_process.
inline constexpr int kNodeExitOk = 0;          // stopped by StopRun
inline constexpr int kNodeExitSetupError = 1;  // bad options, bind failure, no Directory in time
inline constexpr int kNodeExitFatal = 3;       // the core reported Effects::fatal_error
inline constexpr int kNodeExitLauncherGone = 4; // exit_on_stdin_eof: stdin ended

// Runs the node until StopRun (returns 0), a fatal core error (3) or a setup/environment
// failure (1); Kill{pause_ms = 0} does not return (SIGKILL). Errors are printed to stderr.
int run_node_process(const NodeProcessOptions& options);

}  // namespace hapair
