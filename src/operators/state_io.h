// Encoding pieces shared by the operators' state blobs: snapshots and delta checkpoints (passive
// standby, paper section 4.1) and restart points (upstream backup, section 4.3). The blobs are
// opaque to everything outside src/operators; this keeps their encoders short and alike.
//
// Invariant: every blob opens with a tag naming its format, so a blob of one kind is never read
// as another's, and every reader rejects short, oversized or trailing bytes (ByteReader::ok() and
// at_end()) instead of asserting, because blobs arrive from peers.
#pragma once

#include <cstdint>
#include <vector>

#include "protocols/bytes.h"
#include "protocols/ids.h"
#include "protocols/tuple.h"

namespace hapair {

enum class BlobTag : std::uint8_t {
  filter_state = 1,
  map_state,
  union_state,
  union_resume,
  aggregate_state,
  aggregate_delta,
  aggregate_resume,
  join_state,
  join_resume,
  fragment_state,
  fragment_delta,
  fragment_restart,
  sunion_state,
  sunion_resume,
  project_state,
  lookup_state,
  top_state,
  top_resume,
};

inline void write_tag(ByteWriter& w, BlobTag tag) { w.u8(static_cast<std::uint8_t>(tag)); }
inline bool read_tag(ByteReader& r, BlobTag tag) {
  const std::uint8_t got = r.u8();
  return r.ok() && got == static_cast<std::uint8_t>(tag);
}

inline void write_bool(ByteWriter& w, bool b) { w.u8(b ? 1 : 0); }
// Anything but 0 or 1 is corruption, so a reader refuses it rather than guessing.
inline bool read_bool(ByteReader& r, bool& out) {
  const std::uint8_t v = r.u8();
  out = v == 1;
  return r.ok() && v <= 1;
}

// A tuple takes five 8-byte fields.
inline constexpr std::size_t kTupleBytes = 40;

inline void write_tuple(ByteWriter& w, const Tuple& t) {
  w.u64(t.id);
  w.i64(t.ts_us);
  w.i64(t.key);
  w.f64(t.value);
  w.u64(t.lineage);
}

inline Tuple read_tuple(ByteReader& r) {
  Tuple t;
  t.id = r.u64();
  t.ts_us = r.i64();
  t.key = r.i64();
  t.value = r.f64();
  t.lineage = r.u64();
  return t;
}

inline void write_ids(ByteWriter& w, const std::vector<TupleId>& ids) {
  w.u64(ids.size());
  for (TupleId id : ids) w.u64(id);
}

inline std::vector<TupleId> read_ids(ByteReader& r) {
  const std::uint64_t n = r.count(8);
  std::vector<TupleId> ids;
  ids.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) ids.push_back(r.u64());
  return ids;
}

}  // namespace hapair
