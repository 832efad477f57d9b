// Windowed Aggregate (paper section 2): count, sum, avg, min or max of the values of each group
// (key, or one group with key 0) over sliding windows [k*slide, k*slide + window) of event time.
// The windows are aligned to absolute timestamps, not to where processing started, which makes
// the operator convergent-capable (section 3): restarted from an empty state anywhere in its
// input, it produces the failure-free output from the first window that starts after the
// restart point on.
//
// Output: closing a window emits one tuple per group present, in ascending key order, with
// id = ++counter, ts = window end, value = the function, lineage = hash(op name, window end, key).
// A window closes when a tuple with ts >= its end arrives (or at end of stream); windows close in
// start order. Empty windows emit nothing.
//
// Cause function (section 4.3): each window remembers the input tuple that created it and, once
// closed, its first and last output ids. The input still needed after output `acked` starts at
// the creating tuple of the earliest window that is open or emitted an output after `acked`.
//
// Delta checkpoints (section 4.1): every (window, key) accumulator carries the state version of
// its last change; a delta holds the scalars, the set of open windows and only the accumulators
// changed since the base version.
//
// Invariants: accumulators only ever add (never subtract), so a window rebuilt from its first
// tuple yields bit-identical doubles; a window is created only if its end is after the
// watermark (the largest ts seen) and its start is not before the restart bound, so a late
// tuple never reopens a closed window and a restarted operator never emits an incomplete one.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "operators/operator.h"
#include "protocols/topology.h"

namespace hapair {

class Aggregate final : public Operator {
 public:
  explicit Aggregate(const OperatorSpec& spec);

  OperatorKind kind() const override { return OperatorKind::aggregate; }
  OperatorClass operator_class() const override { return OperatorClass::convergent_capable; }
  std::size_t input_count() const override { return 1; }

  void process(std::size_t port, const Tuple& t, Tuples& out) override;
  void end_of_stream(std::size_t port, Tuples& out) override;
  bool has_finished() const override { return ended_; }

  Bytes snapshot() const override;
  bool restore(const Bytes& snapshot) override;

  bool supports_delta() const override { return true; }
  std::uint64_t state_version() const override { return version_; }
  Bytes snapshot_delta(std::uint64_t since_version) const override;
  // false (state unchanged) when the blob is corrupt or was taken against another base version.
  bool apply_delta(const Bytes& delta) override;

  RestartPoint restart_point(TupleId acked_output) const override;
  bool restart_from(const RestartPoint& point) override;
  void forget_up_to(TupleId acked_output) override;

  std::size_t open_windows() const { return open_.size(); }
  // An output's ts is its window's end: the earliest open window's end and the input's boundary
  // bound every later one (a window a later input opens ends after that input).
  TimeUs output_boundary(const std::vector<TimeUs>& input_boundaries) const override;
  // Tuples whose ts was below the watermark; they count only for windows still open.
  std::uint64_t late_tuples() const { return late_tuples_; }
  // The start of the earliest window that contains `ts_us`.
  TimeUs first_window_start_us(TimeUs ts_us) const;

 private:
  static constexpr TimeUs kNoBound = std::numeric_limits<TimeUs>::min();

  struct Accumulator {
    std::uint64_t count = 0;
    double sum = 0.0;
    double min = 0.0;
    double max = 0.0;
    std::uint64_t version = 0;  // state version of the last change
  };
  struct OpenWindow {
    TupleId first_input_id = 0;  // the tuple that created the window
    std::uint64_t version = 0;   // state version at creation
    std::map<std::int64_t, Accumulator> groups;
  };
  struct ClosedWindow {
    TupleId first_input_id = 0;
    TupleId first_output_id = 0;
    TupleId last_output_id = 0;
    std::uint64_t version = 0;  // state version at closing
  };

  struct Config {
    std::uint64_t name_hash = 0;
    AggregateFunction function = AggregateFunction::sum;
    TimeUs window_us = 0;
    TimeUs slide_us = 0;
    bool group_by_key = true;
  };
  explicit Aggregate(const Config& config) : config_(config) {}

  void close_window(std::map<TimeUs, OpenWindow>::iterator it, Tuples& out);
  double result(const Accumulator& a) const;
  RestartPoint make_point(TupleId replay_after, TimeUs min_window_start_us, TupleId counter) const;
  void write_scalars(ByteWriter& w) const;
  // Reads the scalars into this (an empty operator used as a parse target).
  bool read_scalars(ByteReader& r);
  void copy_scalars_from(const Aggregate& other);

  Config config_;

  // State.
  std::uint64_t version_ = 0;
  TupleId counter_ = 0;
  TupleId last_input_id_ = 0;
  bool has_watermark_ = false;
  TimeUs watermark_us_ = 0;
  TimeUs min_window_start_us_ = kNoBound;  // set by restart_from: earlier windows are incomplete
  bool ended_ = false;
  std::uint64_t late_tuples_ = 0;
  std::map<TimeUs, OpenWindow> open_;      // by window start
  std::map<TimeUs, ClosedWindow> closed_;  // by window start; cause bookkeeping until forgotten
};

}  // namespace hapair
