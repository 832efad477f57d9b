// timeline.html: the page every run folder gets, to watch what happened in the run (issue 14,
// docs/TIMELINE.md). The page itself is web/timeline/ (inlined and embedded in the binary by
// scripts/embed_web.cmake); this module writes the run's data into it: the plan's fragments,
// nodes and streams, the faults, every typed trace event (as in trace.jsonl), every delivery
// with its status against the reference (judge/checker.h classify_output) and the reference
// tuples that never came.
//
// Invariant: the counts in the data agree with the checker's report (exact + missing =
// reference tuples judged; missing = lost; duplicates; differing); deliveries on streams the
// checker did not judge (a Union's order unknown) have status "not_judged". The page is a pure
// function of the arguments.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "judge/checker.h"
#include "protocols/run_result.h"

namespace hapair {

// The data the page shows (docs/TIMELINE.md, "The data"). `reference`: the judged reference
// (run_once.h Judgement::reference); `title`: the page's heading.
nlohmann::ordered_json timeline_data(const RunResult& result, const SemanticsReport& semantics,
                                     const std::vector<Delivery>& reference, std::uint64_t seed,
                                     const std::string& version, const std::string& title);

// The self-contained page with `data` in it (every '<' written as the JSON escape \u003c).
std::string timeline_html(const nlohmann::ordered_json& data);

// The embedded page templates (web/, inlined).
std::string_view timeline_template();

}  // namespace hapair
