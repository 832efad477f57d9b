// The teaching demo's simulator as WebAssembly (docs/DEMO.md, "Static page"): the demo service
// (demo/demo_service.h) behind one C export, so the page runs without any server.
//
//   hapair_demo(request_json) -> answer_json
//
// The answer stays valid until the next call. Built by scripts/build_wasm.sh (em++ from Debian's
// emscripten); the codec and ZeroMQ are not in this build (the cores never needed them).
#include <string>

#include <emscripten/emscripten.h>

#include "demo/demo_service.h"

namespace {

hapair::DemoService& service() {
  // The one service of the page (a page is one program: its state lives as long as it does).
  static hapair::DemoService s;
  return s;
}

std::string& answer() {
  static std::string a;
  return a;
}

}  // namespace

extern "C" EMSCRIPTEN_KEEPALIVE const char* hapair_demo(const char* request) {
  answer() = service().handle(std::string(request == nullptr ? "" : request));
  return answer().c_str();
}
