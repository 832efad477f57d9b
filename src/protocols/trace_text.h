// Typed trace events as text, for people: a detail's value by its key's type (a node or stream
// id as its name, an enum as its name, a flag as true/false), and an event's details as
// `key=value` words (events.csv, messages). Writers of machine-read files (trace.jsonl) use
// trace_value_text too, so a name is spelled the same everywhere. Nothing parses this text back:
// code reads TraceEvent's fields.
#pragma once

#include <string>

#include "protocols/plan.h"
#include "protocols/trace.h"

namespace hapair {

// A node's name in `plan` ("launcher" for kNoNode, the number when out of range or no plan).
std::string trace_node_name(const Plan* plan, NodeId node);
// The value of one detail as text (a node detail of kNoNode is "none").
std::string trace_value_text(const Plan* plan, const TraceDetail& d);
// "key=value key=value ..." in the order the details were added, then the text (if any) after
// " -- ".
std::string trace_details_text(const Plan* plan, const TraceEvent& e);

}  // namespace hapair
