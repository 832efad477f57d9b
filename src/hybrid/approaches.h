// Hybrid standby, registered as an approach (primary/approach.h): the primary's end (passive
// standby's checkpoints, and the switches: a bootstrap checkpoint and redirected input to make
// its standby active, the redirection undone to make it passive again) and the standby's.
#pragma once

#include <cstdint>
#include <memory>

#include "primary/approach.h"

namespace hapair {

Approach hybrid_standby_approach();

// The primary's end (the standby hands over to a PrimaryRole with one when it takes over).
std::unique_ptr<PrimarySide> make_hybrid_primary_side(Server& server, const PrimaryOptions& options);

// Bootstrap checkpoints (the switch to active) are numbered from here, the passive checkpoints
// from 1, so the standby tells them apart by id (2^40 passive checkpoints at one per millisecond
// take 35 years).
inline constexpr std::uint64_t kHybridBootstrapIdFirst = std::uint64_t{1} << 40;

}  // namespace hapair
