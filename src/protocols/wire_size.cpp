#include "protocols/wire_size.h"

#include <type_traits>
#include <variant>

#include "protocols/check.h"

namespace hapair {

namespace {

// Words of each struct of wire.capnp: data section + pointer section.
constexpr std::size_t kEnvelopeWords = 3 + 1;
constexpr std::size_t kTupleWords = 5 + 0;
constexpr std::size_t kTupleBatchWords = 3 + 1;
constexpr std::size_t kLevel0AckWords = 2 + 0;
constexpr std::size_t kLevel1AckWords = 3 + 2;
constexpr std::size_t kCheckpointWords = 4 + 1;
constexpr std::size_t kCheckpointAckWords = 1 + 0;
constexpr std::size_t kHeartbeatWords = 1 + 0;
constexpr std::size_t kTakeoverWords = 3 + 1;
constexpr std::size_t kStandbyRefWords = 2 + 0;
constexpr std::size_t kCandidacyWords = 2 + 0;
constexpr std::size_t kRedirectWords = 2 + 0;
constexpr std::size_t kReplayRequestWords = 4 + 0;
constexpr std::size_t kStoredRestartPointWords = 2 + 2;
constexpr std::size_t kDownstreamRestartPointsWords = 2 + 1;
constexpr std::size_t kRestartPointsWords = 2 + 1;
constexpr std::size_t kDeterminantRecordWords = 1 + 0;
constexpr std::size_t kDeterminantsWords = 2 + 1;
constexpr std::size_t kDeterminantAckWords = 2 + 0;
constexpr std::size_t kRejoinWords = 2 + 0;
constexpr std::size_t kCheckpointTriggerWords = 1 + 0;
constexpr std::size_t kCheckpointBarrierWords = 3 + 0;
constexpr std::size_t kCheckpointCompleteWords = 1 + 0;
constexpr std::size_t kRollbackWords = 3 + 1;
constexpr std::size_t kRestoredWords = 2 + 0;

constexpr std::size_t blob(std::size_t bytes) { return (bytes + 7) / 8; }
// A list of `n` structs of `element_words` each: a tag word, then the elements.
constexpr std::size_t struct_list(std::size_t n, std::size_t element_words) { return 1 + n * element_words; }

std::size_t forwarded_words(const std::vector<DownstreamRestartPoints>& forwarded);

std::size_t point_words(const StoredRestartPoint& p) {
  // The codec writes `forwarded` only when it is not empty.
  return blob(p.restart_point.size()) + (p.forwarded.empty() ? 0 : forwarded_words(p.forwarded));
}

std::size_t points_words(const std::vector<StoredRestartPoint>& points) {
  std::size_t words = struct_list(points.size(), kStoredRestartPointWords);
  for (const StoredRestartPoint& p : points) words += point_words(p);
  return words;
}

std::size_t forwarded_words(const std::vector<DownstreamRestartPoints>& forwarded) {
  std::size_t words = struct_list(forwarded.size(), kDownstreamRestartPointsWords);
  for (const DownstreamRestartPoints& f : forwarded) words += points_words(f.points);
  return words;
}

std::size_t body_words(const TupleBatch& m) { return kTupleBatchWords + struct_list(m.tuples.size(), kTupleWords); }
std::size_t body_words(const Level0Ack&) { return kLevel0AckWords; }
std::size_t body_words(const Level1Ack& m) {
  return kLevel1AckWords + blob(m.restart_point.size()) + (m.forwarded.empty() ? 0 : forwarded_words(m.forwarded));
}
std::size_t body_words(const Checkpoint& m) { return kCheckpointWords + blob(m.payload.size()); }
std::size_t body_words(const CheckpointAck&) { return kCheckpointAckWords; }
std::size_t body_words(const Heartbeat&) { return kHeartbeatWords; }
std::size_t body_words(const Takeover& m) {
  // The codec writes `moreStandbys` only for a second standby and beyond.
  return kTakeoverWords + (m.standbys.size() > 1 ? struct_list(m.standbys.size() - 1, kStandbyRefWords) : 0);
}
std::size_t body_words(const Candidacy&) { return kCandidacyWords; }
std::size_t body_words(const Redirect&) { return kRedirectWords; }
std::size_t body_words(const ReplayRequest&) { return kReplayRequestWords; }
std::size_t body_words(const RestartPoints& m) { return kRestartPointsWords + points_words(m.points); }
std::size_t body_words(const Determinants& m) {
  return kDeterminantsWords + struct_list(m.records.size(), kDeterminantRecordWords);
}
std::size_t body_words(const DeterminantAck&) { return kDeterminantAckWords; }
std::size_t body_words(const Rejoin&) { return kRejoinWords; }
std::size_t body_words(const CheckpointTrigger&) { return kCheckpointTriggerWords; }
std::size_t body_words(const CheckpointBarrier&) { return kCheckpointBarrierWords; }
std::size_t body_words(const CheckpointComplete&) { return kCheckpointCompleteWords; }
// A list of UInt16 has no tag word: its elements, rounded up to whole words.
std::size_t body_words(const Rollback& m) { return kRollbackWords + blob(2 * m.fragments.size()); }
std::size_t body_words(const Restored&) { return kRestoredWords; }

}  // namespace

bool wire_size_known(const Message& body) { return !is_control_message(body); }

std::size_t wire_bytes(const Envelope& e) {
  HAPAIR_CHECK_MSG(wire_size_known(e.body), "wire_bytes of a control message (" << message_kind_name(e.body) << ")");
  const std::size_t body = std::visit(
      [](const auto& m) -> std::size_t {
        if constexpr (requires { body_words(m); }) return body_words(m);
        else return 0;
      },
      e.body);
  // The segment table (one segment: its count and its size, 4 bytes each), the root pointer,
  // the Envelope, its body.
  return 8 + 8 * (1 + kEnvelopeWords + body);
}

}  // namespace hapair
