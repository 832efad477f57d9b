// The shortest text that reads back as exactly the same double (std::to_chars' shortest form),
// for messages and commands that echo numbers. The demo's WebAssembly build has a standard
// library without floating-point to_chars; there the same text comes from printf with the
// smallest precision that reads back exactly.
#pragma once

#include <string>

namespace hapair {

std::string shortest_text(double v);

}  // namespace hapair
