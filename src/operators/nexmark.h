// NEXMark's online auction (Person, Auction and Bid events) as hapair source tuples: the event
// generator of Apache Beam's NEXMark suite (sdks/java/testing/nexmark, package
// org.apache.beam.sdk.nexmark.sources.generator: GeneratorConfig, Generator, and model/
// PersonGenerator, AuctionGenerator, BidGenerator, PriceGenerator, LongGenerator), with
// NexmarkConfiguration's defaults, run as one generator (numEventGenerators = 1) at a constant
// rate. docs/TOPOLOGY.md, "Workload generators", lists what is simplified.
//
// Invariants:
// - One global event sequence, numbered n = 0, 1, 2, ... (Beam's event id): event n is a person
//   when n mod 50 < 1, an auction when n mod 50 < 4, else a bid (person : auction : bid =
//   1 : 3 : 46).
// - Event n happens at ts = floor((n + 1) * 1e6 / events_per_s) µs, so a network's person, auction
//   and bid streams interleave exactly as the sequence says, and no event is at time 0.
// - Every field of event n is a pure function of (seed, NexmarkSpec, n), never of which events
//   were generated before. Beam seeds java.util.Random with n; hapair derives each field's draws
//   from mix64(seed, n) (protocols/rng.h), so the numbers differ from Beam's while every rule
//   that chooses them (ids from the event number, active windows, hot items, prices) is Beam's.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "protocols/ids.h"
#include "protocols/topology.h"

namespace hapair {

// GeneratorConfig's constants.
inline constexpr std::uint64_t kNexmarkPersonProportion = 1;
inline constexpr std::uint64_t kNexmarkAuctionProportion = 3;
inline constexpr std::uint64_t kNexmarkBidProportion = 46;
inline constexpr std::uint64_t kNexmarkProportionDenominator =
    kNexmarkPersonProportion + kNexmarkAuctionProportion + kNexmarkBidProportion;
inline constexpr std::int64_t kNexmarkFirstPersonId = 1000;
inline constexpr std::int64_t kNexmarkFirstAuctionId = 1000;
inline constexpr std::int64_t kNexmarkFirstCategoryId = 10;
// AuctionGenerator.NUM_CATEGORIES; the lead of ids "ahead" of the last one created
// (PERSON_ID_LEAD, AUCTION_ID_LEAD); the batches whose first member is hot (HOT_SELLER_RATIO,
// HOT_AUCTION_RATIO, HOT_BIDDER_RATIO: the hot seller is the first person of the last batch of
// 100, the hot bidder the second, the hot auction the first auction of the last batch of 100).
inline constexpr std::int64_t kNexmarkCategories = 5;
inline constexpr std::int64_t kNexmarkPersonIdLead = 10;
inline constexpr std::int64_t kNexmarkAuctionIdLead = 10;
inline constexpr std::int64_t kNexmarkHotBatch = 100;

// PersonGenerator's choices; a person's state and city are these indexes, its name the index
// first * 9 + last of its first and last name.
inline constexpr std::array<const char*, 6> kNexmarkStates{"AZ", "CA", "ID", "OR", "WA", "WY"};
inline constexpr std::array<const char*, 10> kNexmarkCities{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
                                                            "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
inline constexpr std::array<const char*, 11> kNexmarkFirstNames{"Peter", "Paul",  "Luke", "John",  "Saul",  "Vicky",
                                                                "Kate",  "Julie", "Sarah", "Deiter", "Walter"};
inline constexpr std::array<const char*, 9> kNexmarkLastNames{"Shultz", "Abrams", "Spencer", "White", "Bartels",
                                                              "Walton", "Smith",  "Jones",   "Noris"};

struct NexmarkPerson {
  std::int64_t id = 0;
  std::int64_t state = 0;  // index into kNexmarkStates
  std::int64_t city = 0;   // index into kNexmarkCities
  std::int64_t name = 0;   // first * 9 + last (kNexmarkFirstNames, kNexmarkLastNames)
  friend bool operator==(const NexmarkPerson&, const NexmarkPerson&) = default;
};
struct NexmarkAuction {
  std::int64_t id = 0;
  std::int64_t seller = 0;  // a person id
  std::int64_t category = 0;
  std::int64_t initial_bid = 0;  // cents
  std::int64_t reserve = 0;      // cents
  TimeUs expires_us = 0;         // event time at which the auction closes
  friend bool operator==(const NexmarkAuction&, const NexmarkAuction&) = default;
};
struct NexmarkBid {
  std::int64_t auction = 0;  // an auction id
  std::int64_t bidder = 0;   // a person id
  std::int64_t price = 0;    // cents
  friend bool operator==(const NexmarkBid&, const NexmarkBid&) = default;
};

// Event n of the sequence; only the member of its kind is filled in.
struct NexmarkEventRecord {
  std::uint64_t number = 0;
  NexmarkEvent kind = NexmarkEvent::person;
  TimeUs ts_us = 0;
  NexmarkPerson person;
  NexmarkAuction auction;
  NexmarkBid bid;
};

NexmarkEvent nexmark_event_kind(std::uint64_t n);
// The event number of the i-th (from 1) event of `kind`.
std::uint64_t nexmark_event_number(NexmarkEvent kind, TupleId i);
// How many events of `kind` are among the first `events` of the sequence (numbers below it).
TupleId nexmark_kind_count(NexmarkEvent kind, std::uint64_t events);
// The share of the sequence that `kind` takes: 1/50, 3/50 or 46/50.
double nexmark_kind_share(NexmarkEvent kind);
TimeUs nexmark_event_time_us(double events_per_s, std::uint64_t n);
// PersonGenerator.lastBase0PersonId and AuctionGenerator.lastBase0AuctionId: the newest person
// or auction at event n (the one being created, at a person or auction event), without the
// FIRST_*_ID offset. The auction id is -1 before the first auction.
std::int64_t nexmark_last_base0_person_id(std::uint64_t n);
std::int64_t nexmark_last_base0_auction_id(std::uint64_t n);
// PriceGenerator.nextPrice from a uniform u in [0, 1): round(10^(6u) * 100) cents, so prices
// are log-uniform from 100 to 10^8 cents.
std::int64_t nexmark_price_cents(double u);

NexmarkEventRecord nexmark_event(const NexmarkSpec& spec, std::uint64_t seed, std::uint64_t n);

// One projectable field of one event kind (the names of nexmark_field_names()).
enum class NexmarkField {
  person_id, person_state, person_city, person_name,
  auction_id, auction_seller, auction_category, auction_initial_bid, auction_reserve, auction_expires,
  bid_auction, bid_bidder, bid_price,
};
// nullopt when `name` is not a field of `kind` (validate() reports it first).
std::optional<NexmarkField> nexmark_field(NexmarkEvent kind, const std::string& name);
// The field's value: ids, codes, cents, and `expires` in µs.
std::int64_t nexmark_field_value(const NexmarkEventRecord& event, NexmarkField field);

}  // namespace hapair
