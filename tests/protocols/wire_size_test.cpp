// wire_bytes (protocols/wire_size.h) is encode().size() for every data-plane message: varied
// messages of every kind here (empty and full lists, blobs of every length modulo 8, nested
// restart points), and every message of simulated runs of every approach in tests/sim.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "protocols/codec.h"
#include "protocols/rng.h"
#include "protocols/wire_size.h"

namespace hapair {
namespace {

Bytes bytes_of(std::size_t n) { return Bytes(n, 0x5a); }

std::vector<Message> samples() {
  std::vector<Message> out;
  for (std::size_t n : {0, 1, 2, 3, 7, 8, 9, 100}) {
    TupleBatch b{3, {}, n % 2 == 0, n % 3 == 0, n, n * 7};
    for (std::size_t i = 0; i < n; ++i) b.tuples.push_back(Tuple{i + 1, static_cast<TimeUs>(i), -4, 2.5, i});
    out.push_back(b);
    out.push_back(Checkpoint{n + 1, n % 2 == 1, n, 0, 1, bytes_of(n)});
    out.push_back(Level1Ack{1, n, n + 1, bytes_of(n), {}});
    Determinants d{2, n, {}};
    for (std::size_t i = 0; i < n; ++i) d.records.push_back(DeterminantRecord{static_cast<std::uint16_t>(i % 2), 3});
    out.push_back(d);
    StoredRestartPoint inner{4, n, bytes_of(n + 3), {}};
    DownstreamRestartPoints forwarded{5, 6, n, {inner, inner}};
    StoredRestartPoint outer{7, n, bytes_of(n), {forwarded}};
    out.push_back(RestartPoints{8, n, {}});
    out.push_back(RestartPoints{8, n, {outer, inner}});
    out.push_back(Level1Ack{1, n, 2, bytes_of(n + 5), {forwarded, DownstreamRestartPoints{1, 2, 3, {}}}});
    // A list of UInt16 is padded to whole words: every length modulo 4.
    Rollback r{n, n + 1, 2, {}};
    for (std::size_t i = 0; i < n; ++i) r.fragments.push_back(static_cast<FragmentId>(i));
    out.push_back(r);
  }
  out.push_back(Level0Ack{1, 99, true});
  out.push_back(CheckpointAck{12});
  out.push_back(Heartbeat{1234567});
  out.push_back(Takeover{1, 2, 3, {{4, 5}}});
  out.push_back(Redirect{1, 2, false, 77});
  out.push_back(ReplayRequest{1, 2, 3, 4});
  out.push_back(DeterminantAck{1, 2});
  out.push_back(Rejoin{1, 2, 3});
  out.push_back(Candidacy{1, 2, 3});
  out.push_back(CheckpointTrigger{5});
  out.push_back(CheckpointBarrier{1, 5, 1234});
  out.push_back(CheckpointComplete{5});
  out.push_back(Rollback{1, 5, 2, {1, 2, 3}});
  out.push_back(Restored{1, 2});
  out.push_back(Takeover{1, 2, 3, {{4, 5}, {6, 7}, {8, 9}}});
  return out;
}

TEST_CASE("wire_bytes is the size encode writes, for every data-plane kind", "[codec]") {
  std::vector<bool> seen(kFirstControlKind, false);
  for (const Message& m : samples()) {
    Envelope e;
    e.header = Header{3, 9, 123456};
    e.body = m;
    INFO("kind " << message_kind_name(m));
    REQUIRE(wire_size_known(m));
    CHECK(wire_bytes(e) == encode(e).size());
    seen[m.index()] = true;
  }
  for (std::size_t k = 0; k < kFirstControlKind; ++k) {
    INFO("kind " << kMessageKindNames[k]);
    CHECK(seen[k]);
  }
  CHECK_FALSE(wire_size_known(Message(Hello{})));
}

}  // namespace
}  // namespace hapair
