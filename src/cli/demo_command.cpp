// `hapair demo`: serves the teaching demo (docs/DEMO.md) on a loopback port until Ctrl-C: a page
// where one picks a network and an approach and watches the simulator run the real protocol
// cores paced down to a speed a room can follow, with kill / pause / partition buttons, rewind,
// two approaches side by side, a guided tour, and real processes to SIGKILL.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "demo/demo_server.h"
#include "runtime/curve.h"

namespace hapair::cli {

int demo_command(const Args& args) {
  namespace po = boost::program_options;
  std::string port_text = "8080", address = "127.0.0.1", sessions_text = "16", runs_dir;
  po::options_description described("hapair demo options");
  described.add_options()
      ("help,h", "show this help")
      ("port", po::value<std::string>(&port_text)->default_value("8080"), "TCP port, 0 .. 65535 (0: any free port; the URL is printed)")
      ("address", po::value<std::string>(&address)->default_value("127.0.0.1"),
       "the address to serve on (the default serves this machine only)")
      ("sessions-max", po::value<std::string>(&sessions_text)->default_value("16"),
       "simulated runs kept at once, 1 .. 1000 (the least recently used is closed first)")
      ("runs-dir", po::value<std::string>(&runs_dir),
       "folder for the result files of real runs started from the page (default: a temporary folder, removed at exit)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(described).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: hapair demo [options]\n\n"
                << "Serves the teaching demo on http://ADDRESS:PORT/ until Ctrl-C (which also stops every node\n"
                   "process a real run started). Open the printed URL in a browser. docs/DEMO.md describes the\n"
                   "page and its JSON protocol. Exit status: 0 after Ctrl-C, 1 when the port cannot be bound, 2 for\n"
                   "bad options.\n\n"
                << described << "\nExample:\n  hapair demo --port 8080   (then open http://127.0.0.1:8080/)\n";
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hapair demo: %s\n(hapair demo --help lists the options)\n", e.what());
    return 2;
  }
  std::vector<std::string> problems;
  const auto port = whole_number("--port", port_text, 0, 65535, problems);
  const auto sessions = whole_number("--sessions-max", sessions_text, 1, 1000, problems);
  if (!problems.empty()) return report_problems("hapair demo", "bad options", problems);
  if (!is_loopback_address(address))
    std::fprintf(stderr,
                 "hapair demo: warning: serving on %s, reachable from the network: anyone who reaches it can start "
                 "runs and kill their processes (the default, 127.0.0.1, serves this machine only)\n",
                 address.c_str());
  DemoServerOptions options;
  options.address = address;
  options.port = static_cast<std::uint16_t>(*port);
  options.sessions_max = static_cast<std::size_t>(*sessions);
  options.runs_dir = runs_dir;
  options.say = [](const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  };
  return run_demo_server(options);
}

}  // namespace hapair::cli
