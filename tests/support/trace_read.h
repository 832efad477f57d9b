// Typed trace events from text, for the tests only: the inverse of protocols/trace_text.h
// (events.csv's `event` and `details` columns). Tests also write the events they need this
// way: trace_event(plan, 1'000'000, "aggregate.backup", "detection", "failed=aggregate detector=connection").
// Node and stream values are names in `plan` (numbers are accepted too; "none" is kNoNode); enum
// values are their names; flags true/false; anything after " -- " is the event's text.
#pragma once

#include <optional>
#include <string>

#include "protocols/plan.h"
#include "protocols/trace.h"

namespace hapair {

// The event, or nullopt with `problem` set (unknown kind, unknown key, a value of the wrong
// type, a key twice).
std::optional<TraceEvent> parse_trace_event(const Plan* plan, TimeUs at_us, NodeId node, const std::string& kind,
                                            const std::string& details, std::string* problem = nullptr);
// The same, for a test's own events: aborts the test binary (with the problem) when malformed.
TraceEvent trace_event(const Plan* plan, TimeUs at_us, NodeId node, const std::string& kind,
                       const std::string& details = "");
TraceEvent trace_event(const Plan& plan, TimeUs at_us, const std::string& node, const std::string& kind,
                       const std::string& details = "");

}  // namespace hapair
