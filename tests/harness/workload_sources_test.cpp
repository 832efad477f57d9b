// Workload sources in topology files (docs/TOPOLOGY.md, [[source]] and "Workload generators"):
// the generator's own keys read, validated with every problem at once and naming the allowed
// values, written back exactly (and a uniform source written as before generators existed), and
// the rate overrides reaching a nexmark source's event rate.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "config/experiment_config.h"
#include "config/topology_file.h"
#include "operators/source_generator.h"
#include "protocols/plan.h"
#include "protocols/topology_builders.h"

using namespace hapair;
using namespace hapair::testing;

namespace {

FragmentSpec nexmark(const std::string& name, const std::string& stream, NexmarkEvent event, const std::string& key,
                     const std::string& value) {
  FragmentSpec f = source(name, stream);
  f.source.generator = SourceGeneratorKind::nexmark;
  f.source.nexmark.event = event;
  f.source.nexmark.key_field = key;
  f.source.nexmark.value_field = value;
  return f;
}

// Persons, auctions and bids of one NEXMark sequence, and YSB ad events, every generator knob
// away from its default; a join and unions read them.
Topology workload_network() {
  Topology t;
  t.name = "workloads";
  FragmentSpec persons = nexmark("persons", "people", NexmarkEvent::person, "id", "city");
  FragmentSpec auctions = nexmark("auctions", "items", NexmarkEvent::auction, "seller", "expires");
  FragmentSpec bids = nexmark("bids", "offers", NexmarkEvent::bid, "bidder", "price");
  for (FragmentSpec* f : {&persons, &auctions, &bids}) {
    NexmarkSpec& n = f->source.nexmark;
    n.events_per_s = 1000.0 / 3.0;
    n.hot_auction_ratio = 3;
    n.hot_sellers_ratio = 5;
    n.hot_bidders_ratio = 7;
    n.num_in_flight_auctions = 50;
    n.num_active_people = 200;
  }
  FragmentSpec ads = source("ads", "ad_events");
  ads.source.generator = SourceGeneratorKind::ysb;
  ads.source.rate_tps = 1234.5;
  ads.source.ysb.campaigns = 20;
  ads.source.ysb.ads_per_campaign = 5;
  ads.source.ysb.key_field = "campaign";
  ads.source.ysb.value_field = "ad_type";
  FragmentSpec plain = source("plain", "numbers");
  FragmentSpec work = fragment("work", {op("sellers", OperatorKind::join, {"people", "items"}, "sold"),
                                        op("all", OperatorKind::union_op, {"sold", "offers", "ad_events", "numbers"}, "merged")});
  t.fragments = {persons, auctions, bids, ads, plain, work, sink("out", {"merged"})};
  return t;
}

std::string workload_temp_path(const std::string& name) {
  return std::string(std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp") + "/hapair-" + name;
}

}  // namespace

TEST_CASE("a topology with nexmark and ysb sources round-trips through write_topology and load_topology_file") {
  const Topology t = workload_network();
  INFO(joined(validate(t)));
  REQUIRE(validate(t).empty());
  const std::string text = write_topology(t);
  INFO(text);
  CHECK(contains(text, "[[source]]\nname = \"bids\"\nstream = \"offers\"\ngenerator = \"nexmark\"\nevents_per_s = 333.333"));
  CHECK(contains(text, "\nevent = \"bid\"\nfields = \"bidder,price\"\nhot_auction_ratio = 3\nhot_sellers_ratio = 5\n"
                       "hot_bidders_ratio = 7\nnum_in_flight_auctions = 50\nnum_active_people = 200\nendpoint = \"\"\n"));
  CHECK(contains(text, "[[source]]\nname = \"ads\"\nstream = \"ad_events\"\ngenerator = \"ysb\"\nrate_tps = 1234.5\n"
                       "campaigns = 20\nads_per_campaign = 5\ncampaign_seed = 1\nfields = \"campaign,ad_type\"\nendpoint = \"\"\n"));
  // A uniform source writes what it wrote before there were generators, and no generator line.
  CHECK(contains(text, "[[source]]\nname = \"plain\"\nstream = \"numbers\"\nrate_tps = 2000\nkey_count = 8\n"
                       "values = \"uniform(0, 100)\"\ninteger_values = true\nendpoint = \"\"\n\n"));

  const std::string path = workload_temp_path("workload-sources-roundtrip.toml");
  {
    std::ofstream out(path);
    out << text;
  }
  const TopologyLoad load = load_topology_file(path);
  std::remove(path.c_str());
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  const Topology back = without_places(*load.topology);
  REQUIRE(back.fragments.size() == t.fragments.size());
  for (std::size_t i = 0; i < t.fragments.size(); ++i) {
    INFO(t.fragments[i].name);
    CHECK(back.fragments[i] == t.fragments[i]);
  }
  CHECK(back == t);
  CHECK(write_topology(*load.topology) == text);
  // The plan's sources generate what the specs say.
  const Plan plan = make_plan(*load.topology);
  const SourceSpec& bids = plan.spec(plan.fragment_id("bids")).source;
  CHECK(source_tuple(bids, 1, 1) == source_tuple(t.fragments[2].source, 1, 1));
}

TEST_CASE("the default network's effective configuration has no generator key") {
  CHECK_FALSE(contains(write_topology(default_topology()), "generator"));
}

TEST_CASE("a nexmark source that names no fields projects its event kind's usual fields") {
  const std::string text = R"(
[[source]]
name = "p"
stream = "people"
generator = "nexmark"
event = "person"

[[source]]
name = "a"
stream = "items"
generator = "nexmark"
event = "auction"

[[source]]
name = "b"
stream = "offers"
generator = "nexmark"

[[source]]
name = "y"
stream = "ads"
generator = "ysb"

[[sink]]
name = "out"
inputs = ["people", "items", "offers", "ads"]
)";
  const TopologyLoad load = parse_topology(text, "w.toml");
  INFO(joined(load.problems));
  REQUIRE(load.topology);
  const auto& f = load.topology->fragments;
  CHECK(f[0].source.nexmark.key_field == "id");
  CHECK(f[0].source.nexmark.value_field == "state");
  CHECK(f[1].source.nexmark.key_field == "id");
  CHECK(f[1].source.nexmark.value_field == "seller");
  CHECK(f[2].source.nexmark.event == NexmarkEvent::bid);
  CHECK(f[2].source.nexmark.key_field == "auction");
  CHECK(f[2].source.nexmark.value_field == "price");
  CHECK(f[2].source.nexmark.events_per_s == 10000.0);
  CHECK(f[3].source.ysb.key_field == "ad");
  CHECK(f[3].source.ysb.value_field == "event_type");
  CHECK(f[3].source.ysb.campaigns == 100);
  CHECK(f[3].source.ysb.ads_per_campaign == 10);
}

TEST_CASE("bad generator knobs are refused all at once, naming file, line and the allowed values") {
  const std::string text = R"([[source]]
name = "s1"
stream = "a"
generator = "nexmrk"

[[source]]
name = "s2"
stream = "b"
generator = "nexmark"
event = "bids"
key_count = 4

[[source]]
name = "s3"
stream = "c"
generator = "nexmark"
event = "auction"
fields = "seller,price"
hot_sellers_ratio = 0
num_active_people = -1

[[source]]
name = "s4"
stream = "d"
generator = "ysb"
fields = "ad,cost"
campaigns = 0
events_per_s = 5

[[source]]
name = "s5"
stream = "e"
events_per_s = 100
fields = "price"

[[sink]]
name = "out"
inputs = ["a", "b", "c", "d", "e"]
)";
  const TopologyLoad load = parse_topology(text, "bad.toml");
  INFO(joined(load.problems));
  CHECK_FALSE(load.topology);
  const auto& p = load.problems;
  CHECK(has_problem(p, {"bad.toml:4: source 's1' generator = \"nexmrk\": unknown value; allowed values: uniform, nexmark, ysb"}));
  CHECK(has_problem(p, {"bad.toml:10: source 's2' event = \"bids\": unknown value; allowed values: person, auction, bid"}));
  CHECK(has_problem(p, {"bad.toml:11: key 'key_count' in source 's2' does not apply to a nexmark source (generator = \"nexmark\"); "
                        "allowed keys for a nexmark source: name, stream, generator, events_per_s, event, fields,"}));
  CHECK(has_problem(p, {"bad.toml:13: source 's3': fields = \"seller,price\": 'price' is not a field of a NEXMark auction; "
                        "allowed fields: id, seller, category, initial_bid, reserve, expires"}));
  CHECK(has_problem(p, {"source 's3': hot_sellers_ratio = 0: must be 1 to 1000000000"}));
  CHECK(has_problem(p, {"source 's3': num_active_people = -1: must be 1 to 1000000000"}));
  CHECK(has_problem(p, {"source 's4': fields = \"ad,cost\": 'cost' is not a field of a YSB ad event; "
                        "allowed fields: ad, campaign, event_type, ad_type, user, page"}));
  CHECK(has_problem(p, {"source 's4': campaigns = 0: must be 1 to 1000000"}));
  CHECK(has_problem(p, {"bad.toml:28: key 'events_per_s' in source 's4' does not apply to a ysb source"}));
  CHECK(has_problem(p, {"bad.toml:33: key 'events_per_s' in source 's5' does not apply to a uniform source (generator = \"uniform\"); "
                        "allowed keys for a uniform source: name, stream, rate_tps, key_count, values, integer_values, generator,"}));
  CHECK(has_problem(p, {"bad.toml:34: key 'fields' in source 's5' does not apply to a uniform source"}));
  // The source with an unknown generator is reported for the generator alone.
  CHECK_FALSE(has_problem(p, {"source 's1'", "does not apply"}));
  // s3's knobs out of range are not compared with s2's, the first nexmark source's, as well.
  CHECK_FALSE(has_problem(p, {"differs from"}));
  CHECK(p.size() == 11);

  const TopologyLoad syntax = parse_topology(R"([[source]]
name = "s"
stream = "a"
generator = "nexmark"
fields = "auction price"

[[sink]]
name = "out"
input = "a"
)",
                                             "f.toml");
  CHECK(has_problem(syntax.problems, {"f.toml:5: source 's' fields = \"auction price\": expected \"KEY_FIELD,VALUE_FIELD\""}));
}

TEST_CASE("the nexmark sources of a network share one event sequence") {
  Topology t = workload_network();
  t.fragments[1].source.nexmark.events_per_s = 500;
  t.fragments[2].source.nexmark.hot_auction_ratio = 9;
  const auto problems = validate(t);
  INFO(joined(problems));
  CHECK(problems.size() == 2);
  CHECK(has_problem(problems, {"source 'auctions': events_per_s = 500 differs from source 'persons'",
                               "the nexmark sources of a network share one event sequence"}));
  CHECK(has_problem(problems, {"source 'bids': hot_auction_ratio = 9 differs from source 'persons'"}));
}

TEST_CASE("a rate override sets a nexmark source's events_per_s and a ysb source's rate_tps") {
  Topology t = workload_network();
  RunOverrides o;
  o.rate_tps = 5000;
  const auto problems = apply_overrides(t, o);
  INFO(joined(problems));
  REQUIRE(problems.empty());
  for (std::size_t i = 0; i < 3; ++i) CHECK(t.fragments[i].source.nexmark.events_per_s == 5000);
  CHECK(t.fragments[3].source.rate_tps == 5000);
  CHECK(t.fragments[4].source.rate_tps == 5000);

  Topology swept = workload_network();
  CHECK(apply_sweep(swept, "rate_tps", 800) == "");
  for (std::size_t i = 0; i < 3; ++i) CHECK(swept.fragments[i].source.nexmark.events_per_s == 800);
  CHECK(swept.fragments[3].source.rate_tps == 800);

  RunOverrides bad;
  bad.rate_tps = 2e7;
  const auto too_fast = apply_overrides(t, bad);
  CHECK(has_problem(too_fast, {"source 'bids': events_per_s = 20000000: must be > 0 and <= 10000000",
                               "(after the command-line overrides)"}));
}
