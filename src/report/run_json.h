// A run as JSON values, for the pages that show it (the timeline, report/timeline.h; the demo,
// demo/demo_session.h) and trace.jsonl: the plan's fragments, nodes and streams, the faults,
// typed trace events and deliveries, in the shapes docs/TIMELINE.md defines.
//
// Only nlohmann-json and the pure layers: the demo's WebAssembly build compiles this file.
// Invariant: every function is a pure function of its arguments (ordered keys in the order
// docs/TIMELINE.md lists them), so the same run gives the same text.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocols/messages.h"
#include "protocols/plan.h"
#include "protocols/trace.h"

namespace hapair {

using OrderedJson = nlohmann::ordered_json;

// One trace event: t_us, node, kind, then every detail under its key (nodes and streams by name,
// enums by name, flags as booleans), then text when there is one.
OrderedJson trace_event_json(const Plan* plan, const TraceEvent& e);

// The plan's fragments, nodes and streams (with what a tuple's lineage is on each stream:
// "source", "window" or "pair").
OrderedJson fragments_json(const Plan& plan);
OrderedJson nodes_json(const Plan& plan);
OrderedJson streams_json(const Plan& plan);

// The injected faults, from the trace: each failure event with the event that ended it (resume,
// restart, heal; until_us null when none did).
OrderedJson faults_json(const Plan& plan, const std::vector<TraceEvent>& events);

// One delivery at a sink, with its status against the reference ("exact", "duplicate",
// "differing", "not_judged").
OrderedJson delivery_json(const Plan& plan, const Delivery& d, const char* status);
// A reference tuple that was never delivered.
OrderedJson missing_json(const Plan& plan, const Delivery& reference_tuple);

// 16 hex digits.
std::string lineage_text(std::uint64_t lineage);

// A stream's name in the plan, or its number when the plan does not know it.
std::string stream_text(const Plan& plan, StreamId s);

}  // namespace hapair
