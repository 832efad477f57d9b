// `hapair demo`'s web server (docs/DEMO.md): Boost.Beast over Boost.Asio on one loopback
// address, serving the demo page (web/demo/, embedded), the session protocol at POST /api/demo
// (demo/demo_service.h, simulated runs), real-process runs started and killed from the page,
// and their timeline pages at /runs/ID/timeline.html.
//
// One thread serves every connection (one request each, then the connection closes), so the
// simulated sessions are touched by that thread only; a real run works in a thread of its own
// and shares only a small record under a mutex (its progress, the kills asked for, its end).
// At most one real run at a time: two would share the machine's cores and disturb each other.
//
// Invariant: SIGINT or SIGTERM stops the server; a real run under way kills and reaps every node
// process it started first (the launcher's own guarantee), and run folders the server made in
// a temporary directory are removed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace hapair {

struct DemoServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port
  std::size_t sessions_max = 16;
  std::string hapair_binary = "/proc/self/exe";  // for real runs' `hapair node` processes
  std::string runs_dir;                          // real runs' result folders; empty: a temporary one
  // Where the server says what it does ("serving on http://..."); empty: stderr.
  std::function<void(const std::string&)> say;
};

// Serves until SIGINT or SIGTERM. Returns 0 after a signal, 1 when the address cannot be bound.
int run_demo_server(const DemoServerOptions& options);

// The embedded demo page (web/demo/index.html, inlined).
std::string demo_page();

}  // namespace hapair
