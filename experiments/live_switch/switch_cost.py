#!/usr/bin/env python3
"""The cost of live switches (docs/ARCHITECTURE.md "Live switching"), from run folders.

Usage: switch_cost.py BASELINE_DIR SWITCHED_DIR [SWITCHED_DIR ...]

BASELINE_DIR is a run without switches, each SWITCHED_DIR the same run (same seed, network and
driver) with switches. For each switch it prints the bytes the primary sent at once for it (the
approach_switch event's bytes), and for the run the output pause: the most any output tuple
(stream, id) was delivered later than in the baseline, and the tuples delivered later by more
than 1 ms; and per switch the most any tuple the baseline delivered within 0.5 s after the switch
came later (the pause the switch itself caused; compare the same number between two baseline
runs for the noise of a real machine)."""
import csv
import sys
from pathlib import Path


def deliveries(run):
    with open(Path(run) / "output.csv", newline="") as f:
        return {(r["stream"], int(r["id"])): int(r["delivery_us"]) for r in csv.DictReader(f)}


def switches(run):
    out = []
    with open(Path(run) / "events.csv", newline="") as f:
        for row in csv.reader(f):
            if len(row) >= 4 and row[2] == "approach_switch" and "bytes=" in row[3]:
                fields = dict(kv.split("=", 1) for kv in row[3].split() if "=" in kv)
                out.append((int(row[0]), row[1], fields.get("from_ha"), fields.get("ha"), int(fields["bytes"])))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base = deliveries(sys.argv[1])
    for run in sys.argv[2:]:
        got = deliveries(run)
        delays = [got[k] - base[k] for k in base if k in got]
        late = sum(1 for d in delays if d > 1000)
        print(f"{run}: output pause {max(delays, default=0) / 1000:.2f} ms (most any output tuple came later than "
              f"without switches), {late} of {len(delays)} tuples later by > 1 ms")
        for at_us, node, frm, to, nbytes in switches(run):
            near = [got[k] - base[k] for k in base if k in got and at_us <= base[k] < at_us + 500_000]
            print(f"  {at_us / 1e6:.3f} s {node}: {frm} -> {to}, {nbytes} bytes sent at once, output pause "
                  f"{max(near, default=0) / 1000:.2f} ms within 0.5 s after it")


if __name__ == "__main__":
    main()
