// The simulator's event queue: a priority queue of timed events in virtual time.
//
// docs/ARCHITECTURE.md asks for a seeded simulator that gives the same run byte for byte for the
// same seed. The queue is the heart of that promise: events come out ordered by (time, insertion
// sequence), so two events scheduled for the same microsecond are handled in the order they were
// scheduled, never in an order that depends on addresses or on the standard library's heap.
//
// Invariant: pop() returns events in non-decreasing time; among equal times, in push order.
// Payloads live in a slab (moved in and out, never copied) and the heap holds only small keys,
// so sifting stays cheap even when a payload carries a whole batch of tuples.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "protocols/check.h"
#include "protocols/ids.h"

namespace hapair::sim {

template <typename Payload>
class EventQueue {
 public:
  struct Popped {
    TimeUs at_us = 0;
    Payload payload;
  };

  // Schedules `payload` at `at_us`; returns its insertion sequence number.
  std::uint64_t push(TimeUs at_us, Payload payload) {
    std::uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
      slots_[slot] = std::move(payload);
    } else {
      HAPAIR_CHECK_MSG(slots_.size() < kSlotsMax, "event queue full: " << slots_.size() << " events");
      slot = static_cast<std::uint32_t>(slots_.size());
      slots_.push_back(std::move(payload));
    }
    const std::uint64_t seq = next_seq_++;
    heap_.push_back(Key{at_us, seq, slot});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    return seq;
  }

  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // Time of the next event; the queue must not be empty.
  TimeUs next_time() const {
    HAPAIR_CHECK(!heap_.empty());
    return heap_.front().at_us;
  }
  // The payload of the next event; the queue must not be empty.
  const Payload& next_payload() const {
    HAPAIR_CHECK(!heap_.empty());
    return slots_[heap_.front().slot];
  }

  Popped pop() {
    HAPAIR_CHECK(!heap_.empty());
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Key key = heap_.back();
    heap_.pop_back();
    Popped out{key.at_us, std::move(slots_[key.slot])};
    slots_[key.slot] = Payload{};
    free_slots_.push_back(key.slot);
    return out;
  }

 private:
  // A slot index is 32 bits; far more events than any run keeps pending at once.
  static constexpr std::size_t kSlotsMax = std::size_t{1} << 31;

  struct Key {
    TimeUs at_us;
    std::uint64_t seq;
    std::uint32_t slot;
  };
  // std::push_heap keeps the "largest" first, so "later" must compare as smaller.
  struct Later {
    bool operator()(const Key& a, const Key& b) const {
      if (a.at_us != b.at_us) return a.at_us > b.at_us;
      return a.seq > b.seq;
    }
  };

  std::vector<Key> heap_;
  std::vector<Payload> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace hapair::sim
