// Checks of a user's input that several commands share (run, compare, chaos, experiment): a name
// looked up among the valid ones, with the close match of a misspelt one, the victim of a
// comparison, and fault times that fall inside the run.
//
// Paper: none directly; the project standard (bad input gets a clear error
// naming the problem and the valid choices).
//
// Invariant: every function here returns problems as full sentences and never throws or aborts
// on bad input; a caller collects them and reports every problem at once (exit status 2).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "protocols/plan.h"
#include "protocols/run_result.h"

namespace hapair {

// The edit distance of two strings: insertions, deletions, substitutions and transpositions of
// two neighbours, one each (optimal string alignment, so "chian" is one edit from "chain").
std::size_t edit_distance(const std::string& a, const std::string& b);

// The valid choice a misspelt `given` most likely meant: the same ignoring case, the only choice
// it is a prefix of (three characters or more), or the only choice nearest to it within a third
// of its length (at least one edit). nullopt when nothing is close or two are equally close.
std::optional<std::string> close_match(const std::string& given, const std::vector<std::string>& choices);

// "a, b, c".
std::string join_names(const std::vector<std::string>& names);

// "<what> 'givn' is not <kind> (did you mean 'given'?); the choices are: a, b, c", the
// parenthesis only when close_match finds one.
std::string unknown_choice(const std::string& what, const std::string& given, const std::string& kind,
                           const std::vector<std::string>& choices);

// The names of every node of the plan, in plan order ("source", "filter", "filter.backup", ...).
std::vector<std::string> node_names(const Plan& plan);
// The nodes a comparison may SIGKILL: the primary of every operator fragment, in plan order.
std::vector<std::string> victim_names(const Plan& plan);

// Problems with `name` as the node every run of `hapair compare` SIGKILLs: it must be the primary
// of an operator fragment (a source or a sink has no approach to compare, a standby is not what
// the approaches protect). `option` names the option in the messages ("--victim").
std::vector<std::string> check_victim(const Plan& plan, const std::string& name, const std::string& option);

// The problem with a fault at `at_s` seconds in a run of this plan, if any: a fault must come
// after the start and before the sources stop (0 < at_s < duration_s), or it tests nothing.
std::optional<std::string> fault_time_problem(const Plan& plan, double at_s);

// Problems with the node names of a fault (node, and peer of a partition): each unknown name with
// the plan's node names and the close match.
std::vector<std::string> fault_node_problems(const Plan& plan, const FaultSpec& fault);

}  // namespace hapair
