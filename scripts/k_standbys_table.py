#!/usr/bin/env python3
"""k standbys (issue 36): overhead, recovery and the faults each k survives, as a table.

For k = 1, 2, 3 (passive standby by default, `--ha active` or `--ha hybrid` for the others;
`hapair run --standbys K`) on the default network
(source -> filter -> aggregate -> sink):
  - overhead: bytes and data-plane messages beyond the same seed's ha none run, failure-free;
  - recovery: the run's recovery time (first new output after the failure) after a SIGKILL of the
    aggregate's primary at 1.5 s, and the checkpoint payload the primary sent;
  - faults survived: the primary plus j of its standbys crashing at the same instant, j = 0..k
    (precise = survived), and the election's winner crashing 0.3 ms after the primary.
Every run is judged against the failure-free reference by hapair itself (summary.json).

Usage: scripts/k_standbys_table.py [--driver sim|real] [--ha passive|active|hybrid] [--seeds N] [--hapair PATH]
Real runs must go under `flock /tmp/hapair-heavy.lock` (they time real processes).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(hapair, driver, seed, ha, k, faults, duration_s):
    with tempfile.TemporaryDirectory() as out:
        cmd = [hapair, "run", "--driver", driver, "--ha", ha, "--seed", str(seed), "--duration-s", str(duration_s),
               "--out", out]
        if k is not None:
            cmd += ["--standbys", str(k)]
        for node, at in faults:
            cmd += ["--fail", f"{node}@{at}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        path = os.path.join(out, "summary.json")
        if not os.path.exists(path):
            sys.exit(f"no summary.json from {' '.join(cmd)}:\n{p.stdout}\n{p.stderr}")
        with open(path) as f:
            return json.load(f)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", default="sim", choices=["sim", "real"])
    ap.add_argument("--ha", default="passive", choices=["passive", "active", "hybrid"])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--duration-s", type=float, default=3.0)
    ap.add_argument("--hapair", default=os.path.join(os.path.dirname(__file__), "..", "build", "src", "cli", "hapair"))
    a = ap.parse_args()
    seeds = range(1, a.seeds + 1)
    base = {s: run(a.hapair, a.driver, s, "none", None, [], a.duration_s)["overhead"] for s in seeds}
    rows = []
    for k in (1, 2, 3):
        standbys = ["aggregate.backup"] + [f"aggregate.backup{i}" for i in range(2, k + 1)]
        free = {s: run(a.hapair, a.driver, s, a.ha, k, [], a.duration_s) for s in seeds}
        bytes_extra = median([free[s]["overhead"]["bytes_total"] - base[s]["bytes_total"] for s in seeds])
        msgs_extra = median([free[s]["overhead"]["messages_total"] - base[s]["messages_total"] for s in seeds])
        ckpt = median([free[s]["overhead"]["bytes_by_kind"].get("checkpoint", 0) for s in seeds])
        crashed = {s: run(a.hapair, a.driver, s, a.ha, k, [("aggregate", 1.5)], a.duration_s) for s in seeds}
        rec = median([crashed[s]["recovery"]["recovery_ms"] for s in seeds])
        det = median([crashed[s]["recovery"]["detection_ms"] for s in seeds])
        precise = sum(crashed[s]["semantics"]["verdict"] == "precise" for s in seeds)
        survived = []
        for j in range(0, k + 1):
            victims = [("aggregate", 1.5)] + [(n, 1.5) for n in standbys[:j]]
            r = run(a.hapair, a.driver, 1, a.ha, k, victims, a.duration_s)
            survived.append(f"{j}:{r['semantics']['verdict'] if r['completed'] else 'incomplete'}")
        winner = "-"
        if k >= 2:
            r = run(a.hapair, a.driver, 1, a.ha, k, [("aggregate", 1.5), ("aggregate.backup", 1.5003)], a.duration_s)
            winner = r["semantics"]["verdict"] if r["completed"] else "incomplete"
        rows.append((k, bytes_extra, msgs_extra, ckpt, det, rec, f"{precise}/{len(seeds)}", " ".join(survived), winner))
    print(f"driver {a.driver}, {a.seeds} seeds, {a.duration_s} s runs, default network, ha = {a.ha}; medians over seeds")
    print("k | bytes beyond none | messages beyond none | checkpoint bytes | detection ms | recovery ms | "
          "precise after primary crash | primary + j standbys crash together (j:verdict) | winner crashes 0.3 ms later")
    print("--- | --- | --- | --- | --- | --- | --- | --- | ---")
    for k, b, m, c, d, r, p, s, w in rows:
        print(f"{k} | {b:,.0f} | {m:,.0f} | {c:,.0f} | {d:.1f} | {r:.1f} | {p} | {s} | {w}")


if __name__ == "__main__":
    main()
