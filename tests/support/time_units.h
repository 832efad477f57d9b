#pragma once
// Time units for the tests' literals: one definition, shared by every test file that needs it
// (two files' own kMs collided once the unity build compiled them together).
#include "protocols/ids.h"

namespace hapair::testing {

inline constexpr TimeUs kMs = 1000;

}  // namespace hapair::testing
