// A sequence kept sorted, appended at its end and taken from its front: an operator's window
// state (the windowed Join's held tuples, section 2 of the paper), where tuples arrive almost
// always in order and leave in order.
//
// Why not a std::set or std::map: a tree costs a node allocation per item and pointer chasing
// per step, and a chaos case's Join spent more time in its trees than in joining. Here an
// in-order item is a push_back, taking the front moves an index, and the vector keeps its
// capacity when it empties, so a steady window allocates nothing. An item out of order (a port
// whose timestamps go backwards) is inserted where a binary search puts it.
//
// Invariant: the items from the front to the end are sorted by `Less` and pairwise distinct
// (inserting an item equal to a held one changes nothing); the front's index moves only forward
// until the vector is compacted, which happens when at least half of it lies before the front.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace hapair {

template <typename T, typename Less>
class SortedRun {
 public:
  using const_iterator = typename std::vector<T>::const_iterator;

  bool empty() const { return head_ == items_.size(); }
  std::size_t size() const { return items_.size() - head_; }
  // The least item; the run must not be empty.
  const T& front() const { return items_[head_]; }
  const_iterator begin() const { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  const_iterator end() const { return items_.end(); }

  // Adds `x` in its place; false (and nothing changes) when an item equal to it is held.
  bool insert(const T& x) {
    if (empty() || Less{}(items_.back(), x)) {
      items_.push_back(x);
      return true;
    }
    const auto at = std::lower_bound(items_.begin() + static_cast<std::ptrdiff_t>(head_), items_.end(), x, Less{});
    if (at != items_.end() && !Less{}(x, *at)) return false;
    items_.insert(at, x);
    return true;
  }

  // Drops the least item; the run must not be empty.
  void pop_front() {
    ++head_;
    if (head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAfter && 2 * head_ >= items_.size()) {
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

  // Drops the item equal to `x`; false when none is held.
  bool erase(const T& x) {
    if (empty()) return false;
    if (!Less{}(front(), x) && !Less{}(x, front())) {
      pop_front();
      return true;
    }
    const auto at = std::lower_bound(items_.begin() + static_cast<std::ptrdiff_t>(head_), items_.end(), x, Less{});
    if (at == items_.end() || Less{}(x, *at)) return false;
    items_.erase(at);
    return true;
  }

 private:
  // Taken items are left in place until this many (and half the vector) have accumulated, so
  // compacting costs O(1) per item.
  static constexpr std::size_t kCompactAfter = 64;

  std::vector<T> items_;
  std::size_t head_ = 0;  // index of the front
};

}  // namespace hapair
