#include "demo/demo_server.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <utility>  // before Boost.Asio 1.74, whose awaitable.hpp uses std::exchange without it
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "demo/demo_networks.h"
#include "demo/demo_service.h"
#include "run/run_once.h"

namespace hapair {

namespace web {
extern const unsigned char kPage_demo_index_html[];
extern const std::size_t kPage_demo_index_html_size;
}  // namespace web

std::string demo_page() {
  return std::string(reinterpret_cast<const char*>(web::kPage_demo_index_html), web::kPage_demo_index_html_size);
}

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Json = OrderedJson;

// Bodies larger than this are refused: a request of the protocol is a few hundred bytes.
constexpr std::size_t kRequestBytesMax = 1 << 20;

// A real run the page started: what the run's thread and the serving thread share.
struct RealRun {
  std::int64_t id = 0;
  std::string folder;
  double duration_s = 0;
  std::vector<std::string> nodes;
  std::mutex mutex;  // guards everything below
  std::string state = "running";  // running, done, failed
  double elapsed_s = 0;
  std::vector<FaultSpec> kills;   // asked for, not yet taken by the launcher
  std::set<std::string> killed;
  std::string verdict;
  std::string error;
};

class Server {
 public:
  explicit Server(const DemoServerOptions& options) : options_(options), service_(options.sessions_max) {
    service_.real_handler = [this](const nlohmann::json& r, bool& error) { return real(r, error); };
  }
  ~Server() {
    if (real_thread_.joinable()) real_thread_.join();
    if (temp_runs_dir_) {
      std::error_code ec;
      std::filesystem::remove_all(runs_dir_, ec);
    }
  }

  int run() {
    say_ = options_.say ? options_.say : [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
    if (!prepare_runs_dir()) return 1;
    beast::error_code ec;
    const auto address = asio::ip::make_address(options_.address, ec);
    if (ec) {
      say_("hapair demo: '" + options_.address + "' is not an IP address");
      return 1;
    }
    tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      say_("hapair demo: cannot listen on " + options_.address + ":" + std::to_string(options_.port) + ": " + ec.message());
      return 1;
    }
    const auto port = acceptor_.local_endpoint().port();
    say_("hapair demo: serving on http://" + options_.address + ":" + std::to_string(port) + "/ (Ctrl-C stops it)");
    signals_.async_wait([this](const beast::error_code&, int) { stop(); });
    accept();
    io_.run();
    say_("hapair demo: stopped");
    return 0;
  }

 private:
  void stop() {
    beast::error_code ignored;
    acceptor_.close(ignored);
    io_.stop();
  }

  bool prepare_runs_dir() {
    runs_dir_ = options_.runs_dir;
    if (runs_dir_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/hapair-demo-XXXXXX";
      if (mkdtemp(pattern.data()) == nullptr) {
        say_("hapair demo: cannot create a temporary folder for real runs");
        return false;
      }
      runs_dir_ = pattern;
      temp_runs_dir_ = true;
    }
    std::error_code ec;
    std::filesystem::create_directories(runs_dir_, ec);
    if (ec) {
      say_("hapair demo: cannot create " + runs_dir_ + ": " + ec.message());
      return false;
    }
    return true;
  }

  void accept() {
    acceptor_.async_accept([this](const beast::error_code& ec, tcp::socket socket) {
      if (ec) return;  // closed: the server stops
      auto connection = std::make_shared<Connection>(std::move(socket));
      read(connection);
      accept();
    });
  }

  struct Connection {
    explicit Connection(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    http::response<http::string_body> response;
  };

  void read(const std::shared_ptr<Connection>& c) {
    c->parser.body_limit(kRequestBytesMax);
    http::async_read(c->socket, c->buffer, c->parser, [this, c](const beast::error_code& ec, std::size_t) {
      if (ec) return;  // the client went away, or sent no HTTP: nothing to answer
      c->response = respond(c->parser.get());
      http::async_write(c->socket, c->response, [c](const beast::error_code&, std::size_t) {
        beast::error_code ignored;
        c->socket.shutdown(tcp::socket::shutdown_send, ignored);
      });
    });
  }

  static http::response<http::string_body> reply(http::status status, const std::string& type, std::string body) {
    http::response<http::string_body> r{status, 11};
    r.set(http::field::server, "hapair demo");
    r.set(http::field::content_type, type);
    r.set(http::field::cache_control, "no-store");
    r.keep_alive(false);
    r.body() = std::move(body);
    r.prepare_payload();
    return r;
  }

  http::response<http::string_body> respond(const http::request<http::string_body>& req) {
    const std::string target(req.target());
    const std::string path = target.substr(0, target.find('?'));
    if (req.method() == http::verb::get && (path == "/" || path == "/index.html"))
      return reply(http::status::ok, "text/html; charset=utf-8", demo_page());
    if (req.method() == http::verb::get && path == "/wasm/hapair_sim.js") {
      // The page served here asks the server (POST /api/demo); the WebAssembly simulator is for
      // the static page only (docs/DEMO.md).
      return reply(http::status::ok, "text/javascript", "/* hapair demo: the simulator runs on the server */\n");
    }
    if (path == "/api/demo") {
      if (req.method() != http::verb::post)
        return reply(http::status::method_not_allowed, "application/json", R"({"error":"POST a JSON request"})");
      // A request that is not JSON is a client's bug (400); a well-formed one that cannot be done
      // (a fault after the run ended, an unknown node) is answered 200 with {"error": ...}: the
      // page shows it, and the browser does not log a failed load.
      bool error = false;
      const auto request = nlohmann::json::parse(req.body(), nullptr, false);
      if (request.is_discarded())
        return reply(http::status::bad_request, "application/json", R"({"error":"the request is not JSON"})");
      const Json answer = service_.handle(request, error);
      return reply(http::status::ok, "application/json",
                   answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    if (req.method() == http::verb::get && path.rfind("/runs/", 0) == 0) return run_file(path);
    return reply(http::status::not_found, "text/plain", "not found: " + path + "\n");
  }

  // /runs/ID/timeline.html of a real run that ended.
  http::response<http::string_body> run_file(const std::string& path) {
    std::int64_t id = 0;
    char rest[64] = {0};
    if (std::sscanf(path.c_str(), "/runs/%ld/%63s", &id, rest) != 2 || std::string(rest) != "timeline.html")
      return reply(http::status::not_found, "text/plain", "not found: " + path + "\n");
    std::ifstream in(runs_dir_ + "/" + std::to_string(id) + "/timeline.html", std::ios::binary);
    if (!in) return reply(http::status::not_found, "text/plain", "no timeline for run " + std::to_string(id) + " (yet)\n");
    std::ostringstream s;
    s << in.rdbuf();
    return reply(http::status::ok, "text/html; charset=utf-8", s.str());
  }

  // ---- real runs ------------------------------------------------------------------------

  Json real(const nlohmann::json& r, bool& error) {
    auto fail = [&](const std::string& what) {
      error = true;
      return Json{{"error", what}};
    };
    const std::string op = r["op"].get<std::string>();
    if (op == "real_start") {
      if (real_ && !finished(*real_)) return fail("a real run is under way (one at a time: they share the cores)");
      if (real_thread_.joinable()) real_thread_.join();
      const std::string network = r.contains("network") && r["network"].is_string() ? r["network"].get<std::string>() : "default";
      const std::string ha_text = r.contains("ha") && r["ha"].is_string() ? r["ha"].get<std::string>() : "passive";
      const auto ha = parse_ha_mode(ha_text);
      if (!ha) return fail("unknown approach '" + ha_text + "'; allowed: " + allowed_ha_modes());
      double duration_s = 8;
      if (r.contains("duration_s")) {
        if (!r["duration_s"].is_number() || !(r["duration_s"].get<double>() >= 2 && r["duration_s"].get<double>() <= 60))
          return fail("'duration_s' must be a number from 2 to 60");
        duration_s = r["duration_s"].get<double>();
      }
      auto topology = demo_topology(network, *ha, 1, duration_s);
      if (!topology) return fail("unknown network '" + network + "'");
      auto plan = std::make_shared<const Plan>(make_plan(*topology));
      auto run = std::make_shared<RealRun>();
      run->id = ++real_count_;
      run->folder = runs_dir_ + "/" + std::to_string(run->id);
      run->duration_s = duration_s;
      for (const PlanNode& n : plan->nodes) run->nodes.push_back(n.name);
      real_ = run;
      const std::string binary = options_.hapair_binary;
      asio::io_context* io = &io_;
      Server* server = this;
      real_thread_ = std::thread([run, plan, binary, io, server] {
        RunRequest request;
        request.driver = "real";
        request.hapair_binary = binary;
        request.out_dir = run->folder;
        request.progress = [run](double elapsed, double) {
          std::lock_guard<std::mutex> lock(run->mutex);
          run->elapsed_s = elapsed;
        };
        request.live_faults = [run] {
          std::lock_guard<std::mutex> lock(run->mutex);
          std::vector<FaultSpec> taken;
          taken.swap(run->kills);
          return taken;
        };
        const RunOutcome outcome = run_once(plan, request, compute_reference(*plan));
        // Ctrl-C during the run reached the launcher (it held the signal to kill its nodes):
        // it was meant for the whole server.
        if (outcome.result.interrupted) asio::post(*io, [server] { server->stop(); });
        std::lock_guard<std::mutex> lock(run->mutex);
        run->verdict = outcome.semantics.verdict;
        if (!outcome.write_error.empty()) run->error = outcome.write_error;
        else if (!outcome.result.errors.empty() && outcome.result.errors.front() != outcome.result.stall)
          run->error = outcome.result.errors.front();
        run->state = run->error.empty() ? "done" : "failed";
      });
      return Json{{"run", run->id}};
    }
    if (!r.contains("run") || !r["run"].is_number_integer() || !real_ || r["run"].get<std::int64_t>() != real_->id)
      return fail("no real run " + (r.contains("run") ? r["run"].dump() : std::string("given")) +
                  (real_ ? "; the last one is " + std::to_string(real_->id) : std::string("; none was started")));
    RealRun& run = *real_;
    if (op == "real_kill") {
      if (!r.contains("node") || !r["node"].is_string()) return fail("'node' must be a string");
      const std::string node = r["node"].get<std::string>();
      if (std::find(run.nodes.begin(), run.nodes.end(), node) == run.nodes.end()) {
        std::string names;
        for (const auto& n : run.nodes) names += (names.empty() ? "" : ", ") + n;
        return fail("no node '" + node + "'; the nodes are " + names);
      }
      std::lock_guard<std::mutex> lock(run.mutex);
      if (run.state != "running") return fail("run " + std::to_string(run.id) + " has ended");
      if (run.killed.count(node)) return fail(node + " was killed already");
      FaultSpec f;
      f.kind = FaultKind::crash;
      f.node = node;
      run.kills.push_back(f);
      run.killed.insert(node);
      return Json{{"ok", true}};
    }
    if (op == "real_status") {
      std::lock_guard<std::mutex> lock(run.mutex);
      Json nodes = Json::array();
      for (const auto& n : run.nodes) nodes.push_back(Json{{"name", n}, {"alive", !run.killed.count(n)}});
      Json j{{"run", run.id}, {"state", run.state}, {"elapsed_s", run.elapsed_s}, {"duration_s", run.duration_s},
             {"nodes", nodes}};
      if (run.state != "running") {
        j["verdict"] = run.verdict;
        j["timeline"] = "/runs/" + std::to_string(run.id) + "/timeline.html";
      }
      if (!run.error.empty()) j["error"] = run.error;
      return j;
    }
    return fail("unknown op '" + op + "'; allowed: real_start, real_kill, real_status");
  }

  static bool finished(RealRun& run) {
    std::lock_guard<std::mutex> lock(run.mutex);
    return run.state != "running";
  }

  DemoServerOptions options_;
  DemoService service_;
  std::function<void(const std::string&)> say_;
  asio::io_context io_{1};
  tcp::acceptor acceptor_{io_};
  asio::signal_set signals_{io_, SIGINT, SIGTERM};
  std::string runs_dir_;
  bool temp_runs_dir_ = false;
  std::int64_t real_count_ = 0;
  std::shared_ptr<RealRun> real_;
  std::thread real_thread_;
};

}  // namespace

int run_demo_server(const DemoServerOptions& options) {
  Server server(options);
  return server.run();
}

}  // namespace hapair
