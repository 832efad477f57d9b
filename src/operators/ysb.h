// The Yahoo Streaming Benchmark's ad events as hapair source tuples, following the benchmark's
// data generator (yahoo/streaming-benchmarks, data/src/setup/core.clj: make-kafka-event-at,
// gen-ads, write-to-redis) and the table its query joins with. The query (filter event_type ==
// view, project (ad_id, event_time), join ad_id -> campaign_id, count per campaign per 10 s
// window) is built from operators on top of these tuples.
//
// What the generator draws, each uniformly and independently per event (clojure's rand-nth):
// the ad among campaigns x ads_per_campaign ads, the event type among view, click, purchase
// (1/3 each), the ad type among 5, the user and the page among 100 each. The event time is the
// emission time: ts = floor(i * 1e6 / rate_tps) µs for event i (from 1).
//
// Invariants: event i is a pure function of (seed, YsbSpec, i), never of which events were
// generated before. The ad -> campaign table is a pure function of (campaign_seed, campaigns,
// ads_per_campaign), not of the run's seed, and gives every campaign exactly ads_per_campaign ads, as YSB's setup does
// (it partitions its list of random ad ids into groups of 10, one per campaign).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "protocols/ids.h"
#include "protocols/topology.h"

namespace hapair {

// Codes of the string fields: the index in these lists.
inline constexpr std::array<const char*, 3> kYsbEventTypes{"view", "click", "purchase"};
inline constexpr std::array<const char*, 5> kYsbAdTypes{"banner", "modal", "sponsored-search", "mail", "mobile"};
inline constexpr std::int64_t kYsbViewEventType = 0;
// core.clj: (make-ids 100) user ids and page ids.
inline constexpr std::int64_t kYsbUsers = 100;
inline constexpr std::int64_t kYsbPages = 100;

struct YsbEvent {
  std::int64_t ad = 0;          // in [0, campaigns x ads_per_campaign)
  std::int64_t campaign = 0;    // ysb_campaign_of(ad): in [0, campaigns)
  std::int64_t event_type = 0;  // index into kYsbEventTypes
  std::int64_t ad_type = 0;     // index into kYsbAdTypes
  std::int64_t user = 0;        // in [0, kYsbUsers)
  std::int64_t page = 0;        // in [0, kYsbPages)
  friend bool operator==(const YsbEvent&, const YsbEvent&) = default;
};

// The campaign that owns `ad` (the static table of the query's lookup join, YSB's Redis
// ad -> campaign map): a seeded bijection of the ads onto [0, campaigns x ads_per_campaign),
// divided by ads_per_campaign. nullopt for an ad outside [0, campaigns x ads_per_campaign) (YSB's
// lookup finds no campaign) or for a table that is not positive.
std::optional<std::int64_t> ysb_campaign_of(std::int64_t ad, std::int64_t campaigns, std::int64_t ads_per_campaign,
                                            std::uint64_t seed);
// The table of a ysb source: its campaigns, ads_per_campaign and campaign_seed.
std::optional<std::int64_t> ysb_campaign_of(std::int64_t ad, const YsbSpec& spec);

// Event i (from 1) of a ysb source.
YsbEvent ysb_event(const YsbSpec& spec, std::uint64_t seed, TupleId i);

// One projectable field (the names of ysb_field_names()).
enum class YsbField { ad, campaign, event_type, ad_type, user, page };
std::optional<YsbField> ysb_field(const std::string& name);
std::int64_t ysb_field_value(const YsbEvent& event, YsbField field);

}  // namespace hapair
