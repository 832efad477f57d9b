@0xd1e5a2b3c4f50617;
# Placeholder; the codec work replaces this with the full Envelope schema.
struct Envelope {
  sender @0 :UInt16;
}
