// The demo's one entry point (docs/DEMO.md): a JSON request in, a JSON answer out. The server
// (demo/demo_server.h) posts every /api/demo body here; the WebAssembly build exports it as
// hapair_demo(). It owns the simulated sessions (at most `sessions_max`; the least recently used
// is closed to make room). Real-process requests (real_*) are the server's; here they are
// refused unless a handler for them is set.
//
// Invariant: a malformed request (not JSON, an unknown op, a missing or mistyped field, an
// unknown session, network, approach or node) changes nothing and is answered {"error": "..."}
// naming the problem and, where there are any, the valid choices.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "demo/demo_session.h"

namespace hapair {

class DemoService {
 public:
  explicit DemoService(std::size_t sessions_max = 16);
  ~DemoService();

  // The answer to one request (both as JSON text).
  std::string handle(const std::string& request_text);
  // The same for a parsed request; `error` set when the answer is an error.
  OrderedJson handle(const nlohmann::json& request, bool& error);

  // Answers the real_* ops (the server sets it; nullptr: refused).
  std::function<OrderedJson(const nlohmann::json& request, bool& error)> real_handler;

  std::size_t sessions() const { return sessions_.size(); }

 private:
  OrderedJson create(const nlohmann::json& request, bool& error);
  DemoSession* find(const nlohmann::json& request, OrderedJson& answer, bool& error);

  std::size_t sessions_max_;
  std::int64_t next_id_ = 1;
  std::map<std::int64_t, std::unique_ptr<DemoSession>> sessions_;
  std::list<std::int64_t> recent_;  // least recently used first
};

}  // namespace hapair
