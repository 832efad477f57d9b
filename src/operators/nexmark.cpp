#include "operators/nexmark.h"

#include <algorithm>
#include <cmath>

#include "protocols/check.h"
#include "protocols/rng.h"
#include "protocols/tuple.h"

namespace hapair {

namespace {

// Each random choice of an event has its own draw, mix64(event, purpose): a field is the same
// whichever other fields are computed, and whatever branches came before it.
enum Draw : std::uint64_t {
  kPersonState = 1,
  kPersonCity,
  kPersonFirstName,
  kPersonLastName,
  kAuctionHotSeller,
  kAuctionSeller,
  kAuctionCategory,
  kAuctionInitialBid,
  kAuctionLength,
  kAuctionReservePlus,
  kBidHotAuction,
  kBidAuction,
  kBidHotBidder,
  kBidBidder,
  kBidPrice,
};

struct Draws {
  std::uint64_t event;
  std::uint64_t bits(Draw d) const { return mix64(event, d); }
  // LongGenerator.nextLong(random, n) and Random.nextInt(n): uniform in [0, n).
  std::int64_t below(Draw d, std::int64_t n) const {
    HAPAIR_CHECK_MSG(n > 0, "n=" << n);
    return static_cast<std::int64_t>(Rng::below(bits(d), static_cast<std::uint64_t>(n)));
  }
  double unit(Draw d) const { return Rng::unit_from_bits(bits(d)); }
};

const std::uint64_t kNexmarkPurpose = hash_name("nexmark events");

constexpr std::uint64_t kKindStart[] = {0, kNexmarkPersonProportion, kNexmarkPersonProportion + kNexmarkAuctionProportion};
constexpr std::uint64_t kKindShare[] = {kNexmarkPersonProportion, kNexmarkAuctionProportion, kNexmarkBidProportion};

std::size_t index_of(NexmarkEvent kind) { return static_cast<std::size_t>(kind); }

// PersonGenerator.nextBase0PersonId: one of the `num_active_people` newest people, or one of the
// PERSON_ID_LEAD ids not created yet (so a person and an event naming it seem swapped in time).
std::int64_t next_base0_person_id(const NexmarkSpec& spec, std::uint64_t n, const Draws& d, Draw draw) {
  const std::int64_t people = nexmark_last_base0_person_id(n) + 1;
  const std::int64_t active = std::min(people, spec.num_active_people);
  return people - active + d.below(draw, active + kNexmarkPersonIdLead);
}

// AuctionGenerator.nextBase0AuctionId: one of the auctions likely still open (the newest
// num_in_flight_auctions + 1) or one of the AUCTION_ID_LEAD ids not created yet.
std::int64_t next_base0_auction_id(const NexmarkSpec& spec, std::uint64_t n, const Draws& d, Draw draw) {
  const std::int64_t max_auction = nexmark_last_base0_auction_id(n);
  const std::int64_t min_auction = std::max<std::int64_t>(max_auction - spec.num_in_flight_auctions, 0);
  return min_auction + d.below(draw, max_auction - min_auction + 1 + kNexmarkAuctionIdLead);
}

NexmarkPerson make_person(std::uint64_t n, const Draws& d) {
  NexmarkPerson p;
  p.id = nexmark_last_base0_person_id(n) + kNexmarkFirstPersonId;
  p.state = d.below(kPersonState, static_cast<std::int64_t>(kNexmarkStates.size()));
  p.city = d.below(kPersonCity, static_cast<std::int64_t>(kNexmarkCities.size()));
  p.name = d.below(kPersonFirstName, static_cast<std::int64_t>(kNexmarkFirstNames.size())) *
               static_cast<std::int64_t>(kNexmarkLastNames.size()) +
           d.below(kPersonLastName, static_cast<std::int64_t>(kNexmarkLastNames.size()));
  return p;
}

NexmarkAuction make_auction(const NexmarkSpec& spec, std::uint64_t n, TimeUs ts_us, const Draws& d) {
  NexmarkAuction a;
  a.id = nexmark_last_base0_auction_id(n) + kNexmarkFirstAuctionId;
  // P(the auction is the hot seller's) = 1 - 1/hot_sellers_ratio.
  if (d.below(kAuctionHotSeller, spec.hot_sellers_ratio) > 0)
    a.seller = (nexmark_last_base0_person_id(n) / kNexmarkHotBatch) * kNexmarkHotBatch;
  else
    a.seller = next_base0_person_id(spec, n, d, kAuctionSeller);
  a.seller += kNexmarkFirstPersonId;
  a.category = kNexmarkFirstCategoryId + d.below(kAuctionCategory, kNexmarkCategories);
  a.initial_bid = nexmark_price_cents(d.unit(kAuctionInitialBid));
  // AuctionGenerator.nextAuctionLengthMs: uniform in [1, 2 x horizon], where the horizon is the
  // time until num_in_flight_auctions more auctions have been created, so that about that many
  // are open at any time. Beam counts it in ms; hapair's event times are µs.
  const auto events_for_auctions =
      static_cast<std::uint64_t>(spec.num_in_flight_auctions) * kNexmarkProportionDenominator / kNexmarkAuctionProportion;
  const TimeUs horizon_us = nexmark_event_time_us(spec.events_per_s, n + events_for_auctions) - ts_us;
  a.expires_us = ts_us + 1 + d.below(kAuctionLength, std::max<TimeUs>(horizon_us * 2, 1));
  a.reserve = a.initial_bid + nexmark_price_cents(d.unit(kAuctionReservePlus));
  return a;
}

NexmarkBid make_bid(const NexmarkSpec& spec, std::uint64_t n, const Draws& d) {
  NexmarkBid b;
  // P(the bid is for the hot auction) = 1 - 1/hot_auction_ratio.
  if (d.below(kBidHotAuction, spec.hot_auction_ratio) > 0)
    b.auction = (nexmark_last_base0_auction_id(n) / kNexmarkHotBatch) * kNexmarkHotBatch;
  else
    b.auction = next_base0_auction_id(spec, n, d, kBidAuction);
  b.auction += kNexmarkFirstAuctionId;
  // P(the bid is the hot bidder's) = 1 - 1/hot_bidders_ratio; the hot bidder is the second person
  // of the batch, so hot bidders and hot sellers do not collide.
  if (d.below(kBidHotBidder, spec.hot_bidders_ratio) > 0)
    b.bidder = (nexmark_last_base0_person_id(n) / kNexmarkHotBatch) * kNexmarkHotBatch + 1;
  else
    b.bidder = next_base0_person_id(spec, n, d, kBidBidder);
  b.bidder += kNexmarkFirstPersonId;
  b.price = nexmark_price_cents(d.unit(kBidPrice));
  return b;
}

}  // namespace

NexmarkEvent nexmark_event_kind(std::uint64_t n) {
  const std::uint64_t rem = n % kNexmarkProportionDenominator;
  if (rem < kNexmarkPersonProportion) return NexmarkEvent::person;
  if (rem < kNexmarkPersonProportion + kNexmarkAuctionProportion) return NexmarkEvent::auction;
  return NexmarkEvent::bid;
}

std::uint64_t nexmark_event_number(NexmarkEvent kind, TupleId i) {
  HAPAIR_CHECK_MSG(i >= 1, "i=" << i);
  const std::uint64_t share = kKindShare[index_of(kind)];
  const std::uint64_t j = i - 1;
  return (j / share) * kNexmarkProportionDenominator + kKindStart[index_of(kind)] + j % share;
}

TupleId nexmark_kind_count(NexmarkEvent kind, std::uint64_t events) {
  const std::uint64_t share = kKindShare[index_of(kind)];
  const std::uint64_t start = kKindStart[index_of(kind)];
  const std::uint64_t rem = events % kNexmarkProportionDenominator;
  const std::uint64_t in_last = rem <= start ? 0 : std::min(rem - start, share);
  return (events / kNexmarkProportionDenominator) * share + in_last;
}

double nexmark_kind_share(NexmarkEvent kind) {
  return static_cast<double>(kKindShare[index_of(kind)]) / static_cast<double>(kNexmarkProportionDenominator);
}

TimeUs nexmark_event_time_us(double events_per_s, std::uint64_t n) {
  if (!(events_per_s > 0.0)) return kNever;
  // floor of a non-negative value: the conversion truncates, which is the same.
  return static_cast<TimeUs>(static_cast<double>(n + 1) * 1e6 / events_per_s);
}

std::int64_t nexmark_last_base0_person_id(std::uint64_t n) {
  const auto epoch = static_cast<std::int64_t>(n / kNexmarkProportionDenominator);
  auto offset = static_cast<std::int64_t>(n % kNexmarkProportionDenominator);
  // About to generate an auction or a bid: back to the last person of this epoch.
  if (offset >= static_cast<std::int64_t>(kNexmarkPersonProportion)) offset = kNexmarkPersonProportion - 1;
  return epoch * static_cast<std::int64_t>(kNexmarkPersonProportion) + offset;
}

std::int64_t nexmark_last_base0_auction_id(std::uint64_t n) {
  auto epoch = static_cast<std::int64_t>(n / kNexmarkProportionDenominator);
  auto offset = static_cast<std::int64_t>(n % kNexmarkProportionDenominator);
  constexpr auto person = static_cast<std::int64_t>(kNexmarkPersonProportion);
  constexpr auto auction = static_cast<std::int64_t>(kNexmarkAuctionProportion);
  if (offset < person) {
    // About to generate a person: back to the last auction of the previous epoch.
    --epoch;
    offset = auction - 1;
  } else if (offset >= person + auction) {
    // About to generate a bid: back to the last auction of this epoch.
    offset = auction - 1;
  } else {
    // About to generate an auction.
    offset -= person;
  }
  return epoch * auction + offset;
}

std::int64_t nexmark_price_cents(double u) {
  // Math.round(Math.pow(10.0, u * 6.0) * 100.0): floor(x + 0.5) for positive x. std::pow is
  // glibc's (correctly rounded in practice, like the log and cos of Rng::normal).
  return static_cast<std::int64_t>(std::floor(std::pow(10.0, u * 6.0) * 100.0 + 0.5));
}

NexmarkEventRecord nexmark_event(const NexmarkSpec& spec, std::uint64_t seed, std::uint64_t n) {
  NexmarkEventRecord e;
  e.number = n;
  e.kind = nexmark_event_kind(n);
  e.ts_us = nexmark_event_time_us(spec.events_per_s, n);
  const Draws d{mix64(mix64(seed, kNexmarkPurpose), n)};
  switch (e.kind) {
    case NexmarkEvent::person: e.person = make_person(n, d); break;
    case NexmarkEvent::auction: e.auction = make_auction(spec, n, e.ts_us, d); break;
    case NexmarkEvent::bid: e.bid = make_bid(spec, n, d); break;
  }
  return e;
}

std::optional<NexmarkField> nexmark_field(NexmarkEvent kind, const std::string& name) {
  switch (kind) {
    case NexmarkEvent::person:
      if (name == "id") return NexmarkField::person_id;
      if (name == "state") return NexmarkField::person_state;
      if (name == "city") return NexmarkField::person_city;
      if (name == "name") return NexmarkField::person_name;
      break;
    case NexmarkEvent::auction:
      if (name == "id") return NexmarkField::auction_id;
      if (name == "seller") return NexmarkField::auction_seller;
      if (name == "category") return NexmarkField::auction_category;
      if (name == "initial_bid") return NexmarkField::auction_initial_bid;
      if (name == "reserve") return NexmarkField::auction_reserve;
      if (name == "expires") return NexmarkField::auction_expires;
      break;
    case NexmarkEvent::bid:
      if (name == "auction") return NexmarkField::bid_auction;
      if (name == "bidder") return NexmarkField::bid_bidder;
      if (name == "price") return NexmarkField::bid_price;
      break;
  }
  return std::nullopt;
}

std::int64_t nexmark_field_value(const NexmarkEventRecord& e, NexmarkField field) {
  switch (field) {
    case NexmarkField::person_id: return e.person.id;
    case NexmarkField::person_state: return e.person.state;
    case NexmarkField::person_city: return e.person.city;
    case NexmarkField::person_name: return e.person.name;
    case NexmarkField::auction_id: return e.auction.id;
    case NexmarkField::auction_seller: return e.auction.seller;
    case NexmarkField::auction_category: return e.auction.category;
    case NexmarkField::auction_initial_bid: return e.auction.initial_bid;
    case NexmarkField::auction_reserve: return e.auction.reserve;
    case NexmarkField::auction_expires: return e.auction.expires_us;
    case NexmarkField::bid_auction: return e.bid.auction;
    case NexmarkField::bid_bidder: return e.bid.bidder;
    case NexmarkField::bid_price: return e.bid.price;
  }
  return 0;
}

}  // namespace hapair
