// The workload generators (operators/nexmark.h, operators/ysb.h) and the sources that emit them
// (operators/source_generator.h): NEXMark's event mix, ids, hot items, prices and timing as
// Apache Beam's generator makes them; YSB's event types and ad -> campaign table as the Yahoo
// benchmark's data generator makes them; both deterministic from (seed, position).
//
// Statistical checks take their tolerance from the binomial standard deviation of the expected
// share (5 sigma), so they follow the knob under test rather than a hand-picked margin.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "operators/nexmark.h"
#include "operators/source_generator.h"
#include "operators/ysb.h"
#include "protocols/tuple.h"

using namespace hapair;

namespace {

SourceSpec nexmark_source(const std::string& stream, NexmarkEvent event, const std::string& key, const std::string& value,
                          double events_per_s = 10000.0) {
  SourceSpec s;
  s.stream = stream;
  s.generator = SourceGeneratorKind::nexmark;
  s.nexmark.event = event;
  s.nexmark.key_field = key;
  s.nexmark.value_field = value;
  s.nexmark.events_per_s = events_per_s;
  return s;
}

SourceSpec ysb_source(const std::string& stream, const std::string& key, const std::string& value, double rate_tps = 10000.0) {
  SourceSpec s;
  s.stream = stream;
  s.generator = SourceGeneratorKind::ysb;
  s.rate_tps = rate_tps;
  s.ysb.key_field = key;
  s.ysb.value_field = value;
  return s;
}

// Within 5 standard deviations of a sum of independent Bernoulli trials with these expectations.
struct Expected {
  double mean = 0.0;
  double variance = 0.0;
  void add(double p) {
    mean += p;
    variance += p * (1.0 - p);
  }
  double tolerance() const { return 5.0 * std::sqrt(variance); }
};

constexpr std::uint64_t kSeed = 20240601;

}  // namespace

TEST_CASE("the nexmark event sequence is person : auction : bid = 1 : 3 : 46, by event number mod 50", "[nexmark]") {
  std::map<NexmarkEvent, std::uint64_t> counts;
  for (std::uint64_t n = 0; n < 50 * 1000; ++n) {
    const NexmarkEvent kind = nexmark_event_kind(n);
    ++counts[kind];
    const std::uint64_t rem = n % 50;
    CHECK(kind == (rem < 1 ? NexmarkEvent::person : rem < 4 ? NexmarkEvent::auction : NexmarkEvent::bid));
  }
  CHECK(counts[NexmarkEvent::person] == 1000);
  CHECK(counts[NexmarkEvent::auction] == 3000);
  CHECK(counts[NexmarkEvent::bid] == 46000);
  CHECK(nexmark_kind_share(NexmarkEvent::person) == 1.0 / 50.0);
  CHECK(nexmark_kind_share(NexmarkEvent::auction) == 3.0 / 50.0);
  CHECK(nexmark_kind_share(NexmarkEvent::bid) == 46.0 / 50.0);
}

TEST_CASE("a nexmark stream's tuple i is the i-th event of its kind in the global sequence", "[nexmark]") {
  const std::array<SourceSpec, 3> specs{nexmark_source("persons", NexmarkEvent::person, "id", "state"),
                                        nexmark_source("auctions", NexmarkEvent::auction, "seller", "id"),
                                        nexmark_source("bids", NexmarkEvent::bid, "auction", "price")};
  std::array<TupleId, 3> seen{0, 0, 0};
  for (std::uint64_t n = 0; n < 5000; ++n) {
    const NexmarkEventRecord e = nexmark_event(specs[0].nexmark, kSeed, n);
    const auto k = static_cast<std::size_t>(e.kind);
    const TupleId i = ++seen[k];
    INFO("event " << n << " is " << to_string(e.kind) << " number " << i);
    REQUIRE(nexmark_event_number(e.kind, i) == n);
    for (NexmarkEvent other : {NexmarkEvent::person, NexmarkEvent::auction, NexmarkEvent::bid})
      REQUIRE(nexmark_kind_count(other, n + 1) == seen[static_cast<std::size_t>(other)]);
    const Tuple t = source_tuple(specs[k], kSeed, i);
    CHECK(t.id == i);
    CHECK(t.ts_us == e.ts_us);
    CHECK(t.lineage == mix64(hash_name(specs[k].stream), n));
    switch (e.kind) {
      case NexmarkEvent::person:
        CHECK(t.key == e.person.id);
        CHECK(t.value == static_cast<double>(e.person.state));
        // Person ids count the people from FIRST_PERSON_ID.
        CHECK(e.person.id == kNexmarkFirstPersonId + static_cast<std::int64_t>(i) - 1);
        break;
      case NexmarkEvent::auction:
        CHECK(t.key == e.auction.seller);
        CHECK(t.value == static_cast<double>(e.auction.id));
        CHECK(e.auction.id == kNexmarkFirstAuctionId + static_cast<std::int64_t>(i) - 1);
        // A seller is a person created by now, or one of the PERSON_ID_LEAD next ones.
        CHECK(e.auction.seller >= kNexmarkFirstPersonId);
        CHECK(e.auction.seller <= kNexmarkFirstPersonId + nexmark_last_base0_person_id(n) + kNexmarkPersonIdLead);
        break;
      case NexmarkEvent::bid:
        CHECK(t.key == e.bid.auction);
        CHECK(t.value == static_cast<double>(e.bid.price));
        CHECK(e.bid.auction >= kNexmarkFirstAuctionId);
        CHECK(e.bid.auction <= kNexmarkFirstAuctionId + nexmark_last_base0_auction_id(n) + kNexmarkAuctionIdLead);
        CHECK(e.bid.bidder <= kNexmarkFirstPersonId + nexmark_last_base0_person_id(n) + kNexmarkPersonIdLead);
        break;
    }
  }
  CHECK(seen[0] == 100);
  CHECK(seen[1] == 300);
  CHECK(seen[2] == 4600);
}

TEST_CASE("the three nexmark streams interleave in time as the global event sequence says", "[nexmark]") {
  // 1000 events per second: event n at (n + 1) ms, so the merged streams' order is the sequence's.
  const double rate = 1000.0;
  const std::array<SourceGenerator, 3> sources{
      SourceGenerator(nexmark_source("persons", NexmarkEvent::person, "id", "city", rate), kSeed),
      SourceGenerator(nexmark_source("auctions", NexmarkEvent::auction, "id", "category", rate), kSeed),
      SourceGenerator(nexmark_source("bids", NexmarkEvent::bid, "bidder", "price", rate), kSeed)};
  const double duration_s = 20.0;
  std::array<TupleId, 3> counts{};
  for (std::size_t k = 0; k < 3; ++k) counts[k] = source_tuple_count(sources[k].spec(), duration_s);
  // ts(n) < 20 s for n + 1 < 20000: 19999 events, of which persons are n = 0, 50, ..., 19950.
  CHECK(counts[0] == 400);
  CHECK(counts[1] == 1200);
  CHECK(counts[2] == 19999 - 400 - 1200);

  std::array<TupleId, 3> next{1, 1, 1};
  for (std::uint64_t n = 0; n < 19999; ++n) {
    // The stream whose next tuple is earliest holds the next event of the sequence.
    std::size_t best = 3;
    for (std::size_t k = 0; k < 3; ++k)
      if (next[k] <= counts[k] && (best == 3 || sources[k].time_us(next[k]) < sources[best].time_us(next[best]))) best = k;
    REQUIRE(best < 3);
    INFO("event " << n);
    REQUIRE(static_cast<NexmarkEvent>(best) == nexmark_event_kind(n));
    REQUIRE(sources[best].time_us(next[best]) == static_cast<TimeUs>((n + 1) * 1000));
    REQUIRE(sources[best].tuple(next[best]).ts_us == static_cast<TimeUs>((n + 1) * 1000));
    ++next[best];
  }
  for (std::size_t k = 0; k < 3; ++k) CHECK(next[k] == counts[k] + 1);

  // A stream's tuple is due exactly when its event is, between the events of the other streams too.
  for (const TimeUs now : {TimeUs{0}, TimeUs{999}, TimeUs{1000}, TimeUs{2000}, TimeUs{4000}, TimeUs{50500}, TimeUs{2'050'000}}) {
    for (const SourceGenerator& g : sources) {
      const TupleId due = g.last_due_by(now);
      INFO(g.spec().stream << " now " << now << " due " << due);
      if (due > 0) CHECK(g.time_us(due) <= now);
      CHECK(g.time_us(due + 1) > now);
    }
  }
}

TEST_CASE("nexmark tuple counts agree with counting the events one by one", "[nexmark]") {
  for (const double rate : {7.0, 1000.0, 1234.5, 10000.0}) {
    for (const NexmarkEvent kind : {NexmarkEvent::person, NexmarkEvent::auction, NexmarkEvent::bid}) {
      for (const double duration_s : {0.1, 1.0, 2.5, 7.77}) {
        const SourceSpec s = nexmark_source("s", kind, kind == NexmarkEvent::bid ? "auction" : "id",
                                            kind == NexmarkEvent::person ? "state" : kind == NexmarkEvent::auction ? "seller" : "price",
                                            rate);
        TupleId naive = 0;
        while (static_cast<double>(source_tuple_time_us(s, naive + 1)) < duration_s * 1e6) ++naive;
        INFO(to_string(kind) << " rate " << rate << " duration " << duration_s);
        CHECK(source_tuple_count(s, duration_s) == naive);
      }
    }
  }
}

TEST_CASE("bids go to the hot auction with probability 1 - 1/hot_auction_ratio, and to hot bidders with 1 - 1/hot_bidders_ratio",
          "[nexmark]") {
  for (const std::int64_t ratio : {std::int64_t{2}, std::int64_t{4}, std::int64_t{10}}) {
    NexmarkSpec spec;
    spec.hot_auction_ratio = ratio;
    spec.hot_bidders_ratio = ratio + 1;
    // AuctionGenerator.nextBase0AuctionId / PersonGenerator.nextBase0PersonId may pick the hot
    // one too (it is always inside their ranges): P = (1 - 1/r) + (1/r) / range.
    Expected hot_auction;
    Expected hot_bidder;
    std::int64_t hot_auction_bids = 0;
    std::int64_t hot_bidder_bids = 0;
    const TupleId bids = 100'000;
    for (TupleId i = 1; i <= bids; ++i) {
      const std::uint64_t n = nexmark_event_number(NexmarkEvent::bid, i);
      const NexmarkBid b = nexmark_event(spec, kSeed, n).bid;
      const std::int64_t last_auction = nexmark_last_base0_auction_id(n);
      const std::int64_t hot_auction_id = kNexmarkFirstAuctionId + (last_auction / kNexmarkHotBatch) * kNexmarkHotBatch;
      const std::int64_t auction_range =
          last_auction - std::max<std::int64_t>(last_auction - spec.num_in_flight_auctions, 0) + 1 + kNexmarkAuctionIdLead;
      hot_auction.add(1.0 - 1.0 / static_cast<double>(ratio) +
                      1.0 / static_cast<double>(ratio) / static_cast<double>(auction_range));
      hot_auction_bids += b.auction == hot_auction_id ? 1 : 0;

      const std::int64_t people = nexmark_last_base0_person_id(n) + 1;
      const std::int64_t hot_bidder_id = kNexmarkFirstPersonId + ((people - 1) / kNexmarkHotBatch) * kNexmarkHotBatch + 1;
      const std::int64_t person_range = std::min(people, spec.num_active_people) + kNexmarkPersonIdLead;
      const double r = static_cast<double>(spec.hot_bidders_ratio);
      hot_bidder.add(1.0 - 1.0 / r + 1.0 / r / static_cast<double>(person_range));
      hot_bidder_bids += b.bidder == hot_bidder_id ? 1 : 0;
    }
    INFO("hot_auction_ratio " << ratio << ": " << hot_auction_bids << " of " << bids << " bids for the hot auction, expected "
                              << hot_auction.mean << " +- " << hot_auction.tolerance());
    CHECK(std::abs(static_cast<double>(hot_auction_bids) - hot_auction.mean) <= hot_auction.tolerance());
    INFO("hot_bidders_ratio " << ratio + 1 << ": " << hot_bidder_bids << " by the hot bidder, expected " << hot_bidder.mean
                              << " +- " << hot_bidder.tolerance());
    CHECK(std::abs(static_cast<double>(hot_bidder_bids) - hot_bidder.mean) <= hot_bidder.tolerance());
  }
}

TEST_CASE("auctions are the hot seller's with probability 1 - 1/hot_sellers_ratio, in categories 10 to 14", "[nexmark]") {
  NexmarkSpec spec;  // hot_sellers_ratio = 4, Beam's default
  Expected hot;
  std::int64_t hot_auctions = 0;
  std::map<std::int64_t, std::int64_t> categories;
  const TupleId auctions = 60'000;
  for (TupleId i = 1; i <= auctions; ++i) {
    const std::uint64_t n = nexmark_event_number(NexmarkEvent::auction, i);
    const NexmarkAuction a = nexmark_event(spec, kSeed, n).auction;
    const std::int64_t people = nexmark_last_base0_person_id(n) + 1;
    const double r = static_cast<double>(spec.hot_sellers_ratio);
    hot.add(1.0 - 1.0 / r + 1.0 / r / static_cast<double>(std::min(people, spec.num_active_people) + kNexmarkPersonIdLead));
    hot_auctions += a.seller == kNexmarkFirstPersonId + ((people - 1) / kNexmarkHotBatch) * kNexmarkHotBatch ? 1 : 0;
    ++categories[a.category];
  }
  INFO(hot_auctions << " of " << auctions << " auctions by the hot seller, expected " << hot.mean << " +- " << hot.tolerance());
  CHECK(std::abs(static_cast<double>(hot_auctions) - hot.mean) <= hot.tolerance());
  REQUIRE(categories.size() == static_cast<std::size_t>(kNexmarkCategories));
  CHECK(categories.begin()->first == kNexmarkFirstCategoryId);
  CHECK(categories.rbegin()->first == kNexmarkFirstCategoryId + kNexmarkCategories - 1);
  const double share = 1.0 / static_cast<double>(kNexmarkCategories);
  const double tolerance = 5.0 * std::sqrt(static_cast<double>(auctions) * share * (1.0 - share));
  for (const auto& [category, count] : categories) {
    INFO("category " << category << ": " << count);
    CHECK(std::abs(static_cast<double>(count) - static_cast<double>(auctions) * share) <= tolerance);
  }
}

TEST_CASE("nexmark prices are PriceGenerator's: 10^(6u) x 100 cents, log-uniform from 1 to 1,000,000 dollars", "[nexmark]") {
  CHECK(nexmark_price_cents(0.0) == 100);
  CHECK(nexmark_price_cents(0.5) == 100'000);
  CHECK(nexmark_price_cents(1.0 / 3.0) == 10'000);
  CHECK(nexmark_price_cents(std::nextafter(1.0, 0.0)) == 100'000'000);

  const NexmarkSpec spec;
  const TupleId bids = 100'000;
  std::array<std::int64_t, 6> decades{};
  double log_sum = 0.0;
  for (TupleId i = 1; i <= bids; ++i) {
    const std::int64_t price = nexmark_event(spec, kSeed, nexmark_event_number(NexmarkEvent::bid, i)).bid.price;
    REQUIRE(price >= 100);
    REQUIRE(price <= 100'000'000);
    const double decade = std::log10(static_cast<double>(price) / 100.0);
    log_sum += decade;
    ++decades[static_cast<std::size_t>(std::min(5.0, std::floor(decade)))];
  }
  // log10(price / 100) is uniform on [0, 6): each decade holds a sixth of the prices, mean 3
  // with the standard deviation 6 / sqrt(12) of that uniform distribution.
  const double share = 1.0 / 6.0;
  const double tolerance = 5.0 * std::sqrt(static_cast<double>(bids) * share * (1.0 - share));
  for (std::size_t d = 0; d < decades.size(); ++d) {
    INFO("prices of 10^" << d << " to 10^" << d + 1 << " dollars: " << decades[d]);
    CHECK(std::abs(static_cast<double>(decades[d]) - static_cast<double>(bids) * share) <= tolerance);
  }
  CHECK(std::abs(log_sum / static_cast<double>(bids) - 3.0) <= 5.0 * (6.0 / std::sqrt(12.0)) / std::sqrt(static_cast<double>(bids)));

  // An auction's reserve is its initial bid plus another price.
  for (TupleId i = 1; i <= 3000; ++i) {
    const NexmarkAuction a = nexmark_event(spec, kSeed, nexmark_event_number(NexmarkEvent::auction, i)).auction;
    CHECK(a.initial_bid >= 100);
    CHECK(a.reserve >= a.initial_bid + 100);
  }
}

TEST_CASE("a nexmark auction expires after 1 us to twice the time num_in_flight_auctions more auctions take", "[nexmark]") {
  NexmarkSpec spec;
  spec.events_per_s = 1000.0;  // 1 ms per event
  // Beam's horizon: 100 auctions x 50 / 3 = 1666 events ahead, here 1.666 s; lengths are
  // uniform in [1, 2 x horizon] us, so their mean is the horizon.
  const TimeUs horizon_us = 1'666'000;
  double sum = 0.0;
  const TupleId auctions = 20'000;
  for (TupleId i = 1; i <= auctions; ++i) {
    const NexmarkEventRecord e = nexmark_event(spec, kSeed, nexmark_event_number(NexmarkEvent::auction, i));
    const TimeUs length = e.auction.expires_us - e.ts_us;
    REQUIRE(length >= 1);
    REQUIRE(length <= 2 * horizon_us);
    sum += static_cast<double>(length);
  }
  const double sd_of_mean = 2.0 * static_cast<double>(horizon_us) / std::sqrt(12.0) / std::sqrt(static_cast<double>(auctions));
  CHECK(std::abs(sum / static_cast<double>(auctions) - static_cast<double>(horizon_us)) <= 5.0 * sd_of_mean);
}

TEST_CASE("nexmark persons draw their state, city and name codes from PersonGenerator's lists", "[nexmark]") {
  const NexmarkSpec spec;
  std::set<std::int64_t> states;
  std::set<std::int64_t> cities;
  std::set<std::int64_t> names;
  for (TupleId i = 1; i <= 5000; ++i) {
    const NexmarkPerson p = nexmark_event(spec, kSeed, nexmark_event_number(NexmarkEvent::person, i)).person;
    states.insert(p.state);
    cities.insert(p.city);
    names.insert(p.name);
  }
  CHECK(states.size() == kNexmarkStates.size());
  CHECK(*states.rbegin() == static_cast<std::int64_t>(kNexmarkStates.size()) - 1);
  CHECK(cities.size() == kNexmarkCities.size());
  CHECK(names.size() == kNexmarkFirstNames.size() * kNexmarkLastNames.size());
  CHECK(std::string(kNexmarkStates[3]) == "OR");  // the code query 3 looks for, with ID (2) and CA (1)
}

TEST_CASE("nexmark and ysb tuples are a pure function of seed, knobs and position", "[nexmark][ysb]") {
  for (const SourceSpec& s : {nexmark_source("bids", NexmarkEvent::bid, "bidder", "price"),
                              nexmark_source("auctions", NexmarkEvent::auction, "id", "reserve"),
                              ysb_source("ads", "ad", "event_type")}) {
    INFO(s.stream);
    // Counter based: tuple 5000 is the same whether or not tuples 1..4999 were generated.
    const Tuple direct = source_tuple(s, 42, 5000);
    for (TupleId i = 1; i < 5000; ++i) source_tuple(s, 42, i);
    CHECK(source_tuple(s, 42, 5000) == direct);
    // The generator, its batch path and the free function agree.
    const SourceGenerator g(s, 42);
    Tuples batch;
    g.append_tuples(1, 2000, batch);
    int same_as_other_seed = 0;
    for (TupleId i = 1; i <= 2000; ++i) {
      REQUIRE(batch[i - 1] == g.tuple(i));
      REQUIRE(g.tuple(i) == source_tuple(s, 42, i));
      const Tuple other = source_tuple(s, 43, i);
      CHECK(other.ts_us == g.tuple(i).ts_us);
      same_as_other_seed += other.key == g.tuple(i).key && other.value == g.tuple(i).value ? 1 : 0;
    }
    // Another seed gives other events (a few may coincide: a ysb event has 3 x 1000 (event type,
    // ad) pairs, so about 2000 / 3000 of them do by chance).
    CHECK(same_as_other_seed <= 20);
  }
  // The events do not depend on the stream's name; the lineage does.
  const SourceSpec a = nexmark_source("a", NexmarkEvent::bid, "auction", "price");
  const SourceSpec b = nexmark_source("b", NexmarkEvent::bid, "auction", "price");
  for (TupleId i = 1; i <= 100; ++i) {
    CHECK(source_tuple(a, 7, i).key == source_tuple(b, 7, i).key);
    CHECK(source_tuple(a, 7, i).value == source_tuple(b, 7, i).value);
    CHECK(source_tuple(a, 7, i).lineage != source_tuple(b, 7, i).lineage);
  }
}

TEST_CASE("ysb event types are view, click and purchase, a third each, as the benchmark's rand-nth draws them", "[ysb]") {
  const YsbSpec spec;
  const TupleId events = 100'000;
  std::array<std::int64_t, 3> types{};
  std::array<std::int64_t, 5> ad_types{};
  std::map<std::int64_t, std::int64_t> per_campaign;
  std::set<std::int64_t> ads;
  for (TupleId i = 1; i <= events; ++i) {
    const YsbEvent e = ysb_event(spec, kSeed, i);
    REQUIRE(e.event_type >= 0);
    REQUIRE(e.event_type < 3);
    ++types[static_cast<std::size_t>(e.event_type)];
    ++ad_types[static_cast<std::size_t>(e.ad_type)];
    ++per_campaign[e.campaign];
    ads.insert(e.ad);
    REQUIRE(e.user >= 0);
    REQUIRE(e.user < kYsbUsers);
    REQUIRE(e.page >= 0);
    REQUIRE(e.page < kYsbPages);
    REQUIRE(ysb_campaign_of(e.ad, spec) == e.campaign);
  }
  auto within = [&](std::int64_t count, double share) {
    return std::abs(static_cast<double>(count) - static_cast<double>(events) * share) <=
           5.0 * std::sqrt(static_cast<double>(events) * share * (1.0 - share));
  };
  for (std::size_t t = 0; t < types.size(); ++t) {
    INFO(kYsbEventTypes[t] << ": " << types[t]);
    CHECK(within(types[t], 1.0 / 3.0));
  }
  for (std::size_t t = 0; t < ad_types.size(); ++t) {
    INFO(kYsbAdTypes[t] << ": " << ad_types[t]);
    CHECK(within(ad_types[t], 1.0 / 5.0));
  }
  CHECK(std::string(kYsbEventTypes[kYsbViewEventType]) == "view");
  // Ads are uniform over the 1000 ads, so every campaign gets a hundredth of the events.
  CHECK(ads.size() == 1000);
  REQUIRE(per_campaign.size() == 100);
  for (const auto& [campaign, count] : per_campaign) {
    INFO("campaign " << campaign << ": " << count);
    CHECK(within(count, 1.0 / 100.0));
  }
}

TEST_CASE("the ysb campaign table gives every campaign exactly ads_per_campaign ads, from the seed", "[ysb]") {
  for (const auto& [campaigns, per] : std::vector<std::pair<std::int64_t, std::int64_t>>{{100, 10}, {7, 3}, {1, 1}, {1000, 1}, {3, 333}}) {
    INFO(campaigns << " campaigns x " << per << " ads");
    std::map<std::int64_t, std::int64_t> owned;
    int same_as_other_seed = 0;
    int in_order = 0;
    for (std::int64_t ad = 0; ad < campaigns * per; ++ad) {
      const auto c = ysb_campaign_of(ad, campaigns, per, kSeed);
      REQUIRE(c.has_value());
      REQUIRE(*c >= 0);
      REQUIRE(*c < campaigns);
      ++owned[*c];
      CHECK(ysb_campaign_of(ad, campaigns, per, kSeed) == c);
      same_as_other_seed += ysb_campaign_of(ad, campaigns, per, kSeed + 1) == c ? 1 : 0;
      in_order += *c == ad / per ? 1 : 0;
    }
    CHECK(owned.size() == static_cast<std::size_t>(campaigns));
    for (const auto& [c, n] : owned) CHECK(n == per);
    if (campaigns >= 100) {
      // A seeded shuffle, not the ads in order, and another one for another seed.
      CHECK(in_order < campaigns * per / 10);
      CHECK(same_as_other_seed < campaigns * per / 10);
    }
    CHECK_FALSE(ysb_campaign_of(-1, campaigns, per, kSeed));
    CHECK_FALSE(ysb_campaign_of(campaigns * per, campaigns, per, kSeed));
  }
  CHECK_FALSE(ysb_campaign_of(0, 0, 10, kSeed));
}

TEST_CASE("a ysb source emits event i at i / rate_tps with the fields it projects", "[ysb]") {
  const SourceSpec s = ysb_source("ads", "campaign", "event_type", 400.0);
  for (TupleId i = 1; i <= 1000; ++i) {
    const Tuple t = source_tuple(s, kSeed, i);
    const YsbEvent e = ysb_event(s.ysb, kSeed, i);
    CHECK(t.id == i);
    CHECK(t.ts_us == static_cast<TimeUs>(i * 2500));
    CHECK(t.key == e.campaign);
    CHECK(t.value == static_cast<double>(e.event_type));
    CHECK(t.lineage == mix64(hash_name("ads"), i));
  }
  CHECK(source_tuple_count(s, 1.0) == 399);
}
