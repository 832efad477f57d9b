// Tests of the teaching demo's service (demo/demo_service.h, docs/DEMO.md): sessions advance
// the simulator slice by slice and answer what is new in time order; a kill of the passive
// primary is recovered with nothing missing while amnesia's shows missing tuples; a rewound
// session (created with the faults) is the same run; bad requests change nothing and say why.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "demo/demo_service.h"

namespace hapair {
namespace {

using Json = nlohmann::json;

Json call(DemoService& s, const Json& request) { return Json::parse(s.handle(request.dump())); }

struct Totals {
  std::size_t events = 0, outputs = 0, missing = 0, exact = 0, duplicate = 0, differing = 0, takeovers = 0;
  std::vector<std::string> switches;  // approach_switch events: "node ha"
  std::size_t in_flight_seen = 0;
  bool in_time_order = true;
  bool ended = false;
  std::string all_events;  // every event, as text, in order
};

// Advances session `id` in slices of `slice_us` until `until_us` (or its end), adding up.
void run(DemoService& s, std::int64_t id, std::int64_t until_us, std::int64_t slice_us, Totals& t,
         std::int64_t& last_event_us) {
  for (std::int64_t to = slice_us;; to += slice_us) {
    const Json a = call(s, {{"op", "advance"}, {"session", id}, {"to_us", std::min(to, until_us)}});
    REQUIRE_FALSE(a.contains("error"));
    for (const auto& e : a["events"]) {
      const std::int64_t at = e["t_us"].get<std::int64_t>();
      if (at < last_event_us) t.in_time_order = false;
      last_event_us = at;
      ++t.events;
      t.takeovers += e["kind"] == "takeover";
      if (e["kind"] == "approach_switch") t.switches.push_back(e["node"].get<std::string>() + " " + e["ha"].get<std::string>());
      t.all_events += e.dump() + "\n";
    }
    for (const auto& o : a["outputs"]) {
      ++t.outputs;
      const std::string st = o["status"].get<std::string>();
      t.exact += st == "exact";
      t.duplicate += st == "duplicate";
      t.differing += st == "differing";
    }
    t.missing += a["missing"].size();
    for (const auto& f : a["state"]["in_flight"]) {
      CHECK(f["arrive_us"].get<std::int64_t>() > a["now_us"].get<std::int64_t>());
      ++t.in_flight_seen;
    }
    t.ended = a["ended"].get<bool>();
    if (t.ended || to >= until_us) return;
  }
}

std::int64_t create(DemoService& s, const std::string& ha, Json faults = Json::array()) {
  const Json a = call(s, {{"op", "create"}, {"network", "default"}, {"ha", ha}, {"seed", 3}, {"duration_s", 4},
                          {"faults", faults}});
  INFO(a.dump());
  REQUIRE(a.contains("session"));
  CHECK(a["meta"]["nodes"].size() >= 4);
  return a["session"].get<std::int64_t>();
}

TEST_CASE("demo: passive standby recovers a killed primary with nothing missing, amnesia loses tuples", "[demo]") {
  // Global checkpoints too: their coordinator is a node of no fragment, shown with no queues.
  for (const std::string ha : {"passive", "amnesia", "checkpoint"}) {
    DYNAMIC_SECTION("ha " << ha) {
      DemoService s;
      const std::int64_t id = create(s, ha);
      Totals t;
      std::int64_t last = 0;
      run(s, id, 2'000'000, 50'000, t, last);
      const Json f = call(s, {{"op", "fault"}, {"session", id}, {"kind", "crash"}, {"node", "aggregate"}});
      INFO(f.dump());
      REQUIRE(f["ok"] == true);
      CHECK(f["fault"]["at_us"] == 2'000'001);
      run(s, id, 60'000'000, 50'000, t, last);
      REQUIRE(t.ended);
      CHECK(t.in_time_order);
      CHECK(t.takeovers == 1);
      CHECK(t.in_flight_seen > 0);
      if (ha != "amnesia") {
        CHECK(t.missing == 0);
        CHECK(t.differing == 0);
      } else {
        CHECK(t.missing > 0);
      }
    }
  }
}

TEST_CASE("demo: a session created with the faults is the same run as one that got them live (rewind)", "[demo]") {
  DemoService s;
  const std::int64_t live = create(s, "passive");
  Totals a;
  std::int64_t last = 0;
  run(s, live, 1'500'000, 40'000, a, last);
  const Json f = call(s, {{"op", "fault"}, {"session", live}, {"kind", "crash"}, {"node", "aggregate"}});
  REQUIRE(f["ok"] == true);
  run(s, live, 3'000'000, 40'000, a, last);

  const std::int64_t rewound = create(s, "passive", Json::array({f["fault"]}));
  Totals b;
  last = 0;
  run(s, rewound, 3'000'000, 250'000, b, last);  // other slices: the same events
  CHECK(b.all_events == a.all_events);
  CHECK(b.outputs == a.outputs);
}

TEST_CASE("demo: a live switch of the aggregate from the page replays the run so far, switches both ends, and stays precise through a crash", "[demo]") {
  DemoService s;
  const std::int64_t id = create(s, "passive");
  Totals t;
  std::int64_t last = 0;
  run(s, id, 1'000'000, 50'000, t, last);
  const std::string before = t.all_events;
  const Json w = call(s, {{"op", "switch"}, {"session", id}, {"fragment", "aggregate"}, {"to", "active"}});
  INFO(w.dump());
  REQUIRE(w["ok"] == true);
  CHECK(w["switch"]["at_us"] == 1'000'001);
  CHECK(w["switch"]["to"] == "active");
  run(s, id, 2'000'000, 50'000, t, last);
  // Both ends traced the switch to active (the primary, then its standby that followed it).
  REQUIRE(t.switches.size() >= 2);
  CHECK(t.switches[0] == "aggregate active");
  CHECK(std::find(t.switches.begin(), t.switches.end(), "aggregate.backup active") != t.switches.end());
  CHECK(t.all_events.rfind(before, 0) == 0);  // the events before the switch were not told again
  const Json f = call(s, {{"op", "fault"}, {"session", id}, {"kind", "crash"}, {"node", "aggregate"}});
  REQUIRE(f["ok"] == true);
  run(s, id, 3'000'000, 50'000, t, last);
  const Totals at_3s = t;  // the rewind below compares up to here (the end depends on the slices)
  run(s, id, 60'000'000, 50'000, t, last);
  REQUIRE(t.ended);
  CHECK(t.in_time_order);
  CHECK(t.takeovers == 1);
  CHECK(t.missing == 0);
  CHECK(t.duplicate == 0);
  CHECK(t.differing == 0);
  CHECK(t.exact == t.outputs);

  // A rewind replays the switch like a fault: the same run.
  const Json a = call(s, {{"op", "create"}, {"network", "default"}, {"ha", "passive"}, {"seed", 3}, {"duration_s", 4},
                          {"faults", Json::array({f["fault"]})}, {"switches", Json::array({w["switch"]})}});
  REQUIRE(a.contains("session"));
  Totals r;
  last = 0;
  run(s, a["session"].get<std::int64_t>(), 3'000'000, 250'000, r, last);  // other slices: the same events
  CHECK(r.all_events == at_3s.all_events);
  CHECK(r.outputs == at_3s.outputs);
  CHECK(r.switches == at_3s.switches);
}

TEST_CASE("demo: a switch the network refuses says why and which approaches may switch, and changes nothing", "[demo]") {
  DemoService s;
  const std::int64_t id = create(s, "passive");
  Totals t;
  std::int64_t last = 0;
  run(s, id, 500'000, 50'000, t, last);
  const std::string amnesia =
      call(s, {{"op", "switch"}, {"session", id}, {"fragment", "aggregate"}, {"to", "amnesia"}})["error"].get<std::string>();
  CHECK(amnesia.find("cannot be switched to live; allowed: upstream, passive, active, hybrid") != std::string::npos);
  const std::string sink =
      call(s, {{"op", "switch"}, {"session", id}, {"fragment", "sink"}, {"to", "active"}})["error"].get<std::string>();
  CHECK(sink.find("no operator fragment of that name; the network's: filter, aggregate") != std::string::npos);
  CHECK(call(s, {{"op", "switch"}, {"session", id}, {"fragment", "aggregate"}, {"to", "warm"}})["error"].get<std::string>().find(
            "unknown approach 'warm'; live switching allows: upstream, passive, active, hybrid") != std::string::npos);
  const std::int64_t none = create(s, "none");
  CHECK(call(s, {{"op", "switch"}, {"session", none}, {"fragment", "aggregate"}, {"to", "active"}})["error"].get<std::string>().find(
            "its approach 'none' cannot be switched live") != std::string::npos);
  CHECK(call(s, {{"op", "networks"}})["switchable"] == Json::array({"upstream", "passive", "active", "hybrid"}));
  // The refused session runs on as before, unswitched.
  run(s, id, 60'000'000, 100'000, t, last);
  CHECK(t.ended);
  CHECK(t.switches.empty());
  CHECK(t.missing == 0);
}

TEST_CASE("demo: single steps advance to the next event and never go back", "[demo]") {
  DemoService s;
  const std::int64_t id = create(s, "active");
  std::int64_t now = 0;
  for (int i = 0; i < 50; ++i) {
    const Json a = call(s, {{"op", "step"}, {"session", id}});
    REQUIRE_FALSE(a.contains("error"));
    CHECK(a["now_us"].get<std::int64_t>() >= now);
    now = a["now_us"].get<std::int64_t>();
  }
  CHECK(now > 0);
}

TEST_CASE("demo: bad requests are answered with the problem and the valid choices", "[demo]") {
  DemoService s;
  CHECK(call(s, {{"op", "fly"}})["error"].get<std::string>().find("allowed: networks, create") != std::string::npos);
  CHECK(Json::parse(s.handle("{not json"))["error"] == "the request is not JSON");
  CHECK(call(s, {{"op", "create"}, {"network", "ring"}})["error"].get<std::string>().find("default chain union") !=
        std::string::npos);
  CHECK(call(s, {{"op", "create"}, {"ha", "hot"}})["error"].get<std::string>().find("none, amnesia") !=
        std::string::npos);
  CHECK(call(s, {{"op", "advance"}, {"session", 9}, {"to_us", 1}})["error"] == "no session 9 (closed, or never created)");
  const std::int64_t id = create(s, "passive");
  const std::string unknown =
      call(s, {{"op", "fault"}, {"session", id}, {"kind", "crash"}, {"node", "agregate"}})["error"].get<std::string>();
  CHECK(unknown.find("no node 'agregate'; the nodes are source, filter") != std::string::npos);
  CHECK(call(s, {{"op", "fault"}, {"session", id}, {"kind", "pause"}, {"node", "filter"}})["error"] ==
        "missing 'duration_us'");
  CHECK(call(s, {{"op", "real_start"}})["error"].get<std::string>().find("need the server") != std::string::npos);
  CHECK(s.sessions() == 1);
  CHECK(call(s, {{"op", "networks"}})["networks"].size() == 3);
}

TEST_CASE("demo: the oldest session is closed when the limit is reached", "[demo]") {
  DemoService s(2);
  const std::int64_t a = create(s, "none");
  create(s, "none");
  create(s, "none");
  CHECK(s.sessions() == 2);
  CHECK(call(s, {{"op", "step"}, {"session", a}}).contains("error"));
}

}  // namespace
}  // namespace hapair
