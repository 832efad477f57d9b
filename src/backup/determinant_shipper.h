// The active primary's side of determinants.
//
// Paper: for non-deterministic operators the primary must ship its non-deterministic choices
// (Union's interleaving) to the active standby, or the standby's output differs and recovery
// is only rollback (section 4.2). The primary releases an output only after the standby has
// acknowledged every determinant it depends on, so a crash right after a send cannot leave the
// downstream holding a tuple the standby would produce differently.
//
// Invariants: a stream's release gate only moves forward, and only to positions whose
// determinants are acknowledged (checked in release, and where the holds are written: each
// hold reaches at least as far as the one before); every gate is held while the shipper lives;
// the records shipped for an operator are numbered consecutively (checked in after_processing);
// coalescing for a resend keeps every unacknowledged record. Acknowledgements come from the
// standby (or from a forged envelope): one beyond what was sent is not an invariant of mine and
// is not checked.
#pragma once

#include <deque>
#include <map>

#include "primary/server.h"

namespace hapair {

class DeterminantShipper {
 public:
  DeterminantShipper(Server& server, NodeId standby);
  void on_start();
  // Ships new determinants and records what the output produced so far depends on.
  void after_processing(TimeUs now, Effects& eff);
  void on_ack(const DeterminantAck& ack);
  // Re-sends determinants the standby has not acknowledged for retransmit_timeout_ms; returns
  // when it next needs to look.
  TimeUs retransmit(TimeUs now, Effects& eff);

 private:
  void release();

  Server& server_;
  NodeId standby_;
  std::map<std::uint16_t, std::uint64_t> sent_;
  std::map<std::uint16_t, std::uint64_t> acked_;
  struct Hold {
    std::map<StreamId, TupleId> up_to;
    std::map<std::uint16_t, std::uint64_t> needs;
  };
  std::deque<Hold> holds_;
  // Sent but unacknowledged determinants, oldest first (bounded by what the standby acks; a
  // standby that is gone stops the primary's output, which is held for it anyway).
  std::deque<Determinants> unacked_;
  TimeUs oldest_sent_us_ = 0;
  std::uint32_t resends_ = 0;
};

}  // namespace hapair
