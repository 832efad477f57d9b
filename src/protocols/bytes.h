// Byte buffers and a small, explicit little-endian writer/reader for operator state snapshots
// and restart points. These blobs travel inside checkpoints and level-1 acks as opaque bytes;
// the codec never looks inside. The reader never reads past the end: a short or corrupt blob
// makes ok() false and every further read returns zero, so the caller can reject it.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace hapair {

using Bytes = std::vector<std::uint8_t>;

// v as eight little-endian bytes, whatever the machine.
inline void put_le64(std::uint64_t v, std::uint8_t out[8]) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::uint8_t>(v >> (8 * i));
}
// The value of eight little-endian bytes, whatever the machine.
inline std::uint64_t get_le64(const std::uint8_t in[8]) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(in[i]) << (8 * i);
  return v;
}

class ByteWriter {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u64(std::uint64_t v) {
    // Little endian whatever the machine; one append, not eight (a checkpoint writes five per
    // retained tuple).
    std::uint8_t le[8];
    put_le64(v, le);
    out_.insert(out_.end(), le, le + 8);
  }
  void reserve(std::size_t bytes) { out_.reserve(bytes); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    u64(bits);
  }
  void bytes(const Bytes& b) {
    u64(b.size());
    out_.insert(out_.end(), b.begin(), b.end());
  }
  void str(const std::string& s) {
    u64(s.size());
    out_.insert(out_.end(), s.begin(), s.end());
  }
  const Bytes& data() const { return out_; }
  Bytes take() { return std::move(out_); }

 private:
  Bytes out_;
};

class ByteReader {
 public:
  explicit ByteReader(const Bytes& b) : data_(b.data()), size_(b.size()) {}
  ByteReader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t u8() {
    if (!need(1)) return 0;
    return data_[pos_++];
  }
  std::uint64_t u64() {
    if (!need(8)) return 0;
    const std::uint64_t v = get_le64(data_ + pos_);
    pos_ += 8;
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }
  double f64() {
    std::uint64_t bits = u64();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  Bytes bytes() {
    std::uint64_t n = u64();
    if (!need(n)) return {};
    Bytes b(data_ + pos_, data_ + pos_ + n);
    pos_ += n;
    return b;
  }
  std::string str() {
    std::uint64_t n = u64();
    if (!need(n)) return {};
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  // n bytes as they are into `out`; false (and ok() false) when fewer remain.
  bool raw(void* out, std::size_t n) {
    if (!need(n)) return false;
    if (n > 0) std::memcpy(out, data_ + pos_, n);
    pos_ += n;
    return true;
  }
  // A count read from the blob, refused when it claims more elements than bytes remain
  // (each element takes at least min_element_bytes).
  std::uint64_t count(std::size_t min_element_bytes) {
    std::uint64_t n = u64();
    if (!ok_ || min_element_bytes == 0) return ok_ ? n : 0;
    if (n > remaining() / min_element_bytes) {
      ok_ = false;
      return 0;
    }
    return n;
  }
  // The unread bytes (remaining() of them), for a decoder of its own that then skip()s what it
  // read, or fail()s.
  const std::uint8_t* cursor() const { return data_ + pos_; }
  void skip(std::size_t n) {
    if (need(n)) pos_ += n;
  }
  void fail() { ok_ = false; }
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == size_; }
  std::size_t remaining() const { return size_ - pos_; }

 private:
  bool need(std::uint64_t n) {
    if (!ok_ || n > size_ - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace hapair
