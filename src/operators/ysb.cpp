#include "operators/ysb.h"

#include "protocols/check.h"
#include "protocols/rng.h"
#include "protocols/tuple.h"

namespace hapair {

namespace {

const std::uint64_t kEventPurpose = hash_name("ysb events");
const std::uint64_t kTablePurpose = hash_name("ysb ad to campaign");

// Each random choice of an event has its own draw, mix64(event, purpose).
enum Draw : std::uint64_t { kAd = 1, kEventType, kAdType, kUser, kPage };

std::int64_t below(std::uint64_t event, Draw d, std::int64_t n) {
  return static_cast<std::int64_t>(Rng::below(mix64(event, d), static_cast<std::uint64_t>(n)));
}

// A seeded permutation of [0, n): a 4-round balanced Feistel network on the smallest even
// number of bits that holds n (at most 4n values), walked until it lands inside [0, n) again
// (cycle walking keeps it a bijection of [0, n); on average fewer than 4 rounds of the network).
std::uint64_t permute(std::uint64_t x, std::uint64_t n, std::uint64_t key) {
  int half = 1;
  while ((std::uint64_t{1} << (2 * half)) < n) ++half;
  const std::uint64_t mask = (std::uint64_t{1} << half) - 1;
  const std::uint64_t domain = std::uint64_t{1} << (2 * half);
  for (std::uint64_t walks = 0;; ++walks) {
    HAPAIR_CHECK_MSG(walks < domain, "x=" << x << " n=" << n);  // a cycle is never longer than the domain
    std::uint64_t left = x >> half;
    std::uint64_t right = x & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t next = left ^ (mix64(mix64(key, round), right) & mask);
      left = right;
      right = next;
    }
    x = (left << half) | right;
    if (x < n) return x;
  }
}

}  // namespace

std::optional<std::int64_t> ysb_campaign_of(std::int64_t ad, std::int64_t campaigns, std::int64_t ads_per_campaign,
                                            std::uint64_t seed) {
  if (campaigns < 1 || ads_per_campaign < 1) return std::nullopt;
  // Beyond 2^62 ads the product could overflow; validate() keeps tables far below it.
  if (campaigns > (std::int64_t{1} << 62) / ads_per_campaign) return std::nullopt;
  const std::int64_t ads = campaigns * ads_per_campaign;
  if (ad < 0 || ad >= ads) return std::nullopt;
  const std::uint64_t slot =
      permute(static_cast<std::uint64_t>(ad), static_cast<std::uint64_t>(ads), mix64(seed, kTablePurpose));
  return static_cast<std::int64_t>(slot) / ads_per_campaign;
}

std::optional<std::int64_t> ysb_campaign_of(std::int64_t ad, const YsbSpec& spec) {
  return ysb_campaign_of(ad, spec.campaigns, spec.ads_per_campaign, spec.campaign_seed);
}

YsbEvent ysb_event(const YsbSpec& spec, std::uint64_t seed, TupleId i) {
  HAPAIR_CHECK_MSG(spec.campaigns >= 1 && spec.ads_per_campaign >= 1,
                   "campaigns=" << spec.campaigns << " ads_per_campaign=" << spec.ads_per_campaign);
  const std::uint64_t event = mix64(mix64(seed, kEventPurpose), i);
  YsbEvent e;
  e.ad = below(event, kAd, spec.campaigns * spec.ads_per_campaign);
  const auto campaign = ysb_campaign_of(e.ad, spec);
  HAPAIR_CHECK_MSG(campaign.has_value(), "ad=" << e.ad);
  e.campaign = *campaign;
  e.event_type = below(event, kEventType, static_cast<std::int64_t>(kYsbEventTypes.size()));
  e.ad_type = below(event, kAdType, static_cast<std::int64_t>(kYsbAdTypes.size()));
  e.user = below(event, kUser, kYsbUsers);
  e.page = below(event, kPage, kYsbPages);
  return e;
}

std::optional<YsbField> ysb_field(const std::string& name) {
  if (name == "ad") return YsbField::ad;
  if (name == "campaign") return YsbField::campaign;
  if (name == "event_type") return YsbField::event_type;
  if (name == "ad_type") return YsbField::ad_type;
  if (name == "user") return YsbField::user;
  if (name == "page") return YsbField::page;
  return std::nullopt;
}

std::int64_t ysb_field_value(const YsbEvent& e, YsbField field) {
  switch (field) {
    case YsbField::ad: return e.ad;
    case YsbField::campaign: return e.campaign;
    case YsbField::event_type: return e.event_type;
    case YsbField::ad_type: return e.ad_type;
    case YsbField::user: return e.user;
    case YsbField::page: return e.page;
  }
  return 0;
}

}  // namespace hapair
