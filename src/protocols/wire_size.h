// The exact size of a data-plane message on the wire, computed without Cap'n Proto: what
// encode() (protocols/codec.h) would return, byte for byte, for the kinds nodes send each other
// (the envelope's body kinds up to Candidacy). The simulator charges these bytes to the links and
// counts them per kind, exactly as the real transport would, without encoding anything; the
// demo's WebAssembly build, which has no Cap'n Proto, uses the same function.
//
// How it is computed: a one-segment Cap'n Proto message is an 8-byte segment table, the root
// pointer, the Envelope struct and, for each struct, list and blob the codec writes, its words:
// a struct its data and pointer words, a list of structs a tag word plus its elements, a blob
// its bytes rounded up to words. The struct sizes are wire.capnp's layout (checked against the
// generated code in tests/protocols/wire_size_test.cpp, with encode() itself over every kind).
#pragma once

#include <cstddef>

#include "protocols/messages.h"

namespace hapair {

// Whether wire_bytes knows the kind (the data plane: every kind before Hello).
bool wire_size_known(const Message& body);

// encode(e).size() for a data-plane envelope; checked (aborts) for a control-plane one.
std::size_t wire_bytes(const Envelope& e);

}  // namespace hapair
