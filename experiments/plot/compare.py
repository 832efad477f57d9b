"""Plot of `hapair compare`: recovery time (detection / rest of recovery) and overhead per approach.

usage: /usr/bin/python3 compare.py compare.csv compare.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def num(row, key):
    v = row.get(key, "")
    return float(v) if v not in ("", None) else None


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    names = [r["approach"] for r in rows]
    det = [num(r, "detection_ms") or 0.0 for r in rows]
    rec = [num(r, "recovery_ms") for r in rows]
    bw = [num(r, "bandwidth_overhead_pct") or 0.0 for r in rows]
    cpu = [num(r, "cpu_overhead_pct") or 0.0 for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    rest = [max(0.0, (r or 0.0) - d) for r, d in zip(rec, det)]
    a.bar(names, det, label="detection", color="#c44e52")
    a.bar(names, rest, bottom=det, label="rest of recovery", color="#4c72b0")
    for i, (r, row) in enumerate(zip(rec, rows)):
        label = row["verdict"] + (f"\nlost {row['lost']}" if row["lost"] not in ("0", "") else "")
        a.text(i, (r or 0.0) * 1.02 + 0.5, label if r is not None else "no recovery\n" + label,
               ha="center", va="bottom", fontsize=8)
    # Leave room above the tallest bar for its label, so the title never runs into the labels.
    top = max([r or 0.0 for r in rec] + det + [1.0])
    a.set_ylim(0, top * 1.3)
    a.set_ylabel("recovery time (ms): failure to first new output")
    a.set_title("recovery after SIGKILL of %s at %s s" % (rows[0]["victim"], rows[0]["fail_at_s"]))
    a.legend(fontsize=8, loc="upper right")
    x = range(len(names))
    b.bar([i - 0.2 for i in x], bw, width=0.4, label="bandwidth", color="#55a868")
    b.bar([i + 0.2 for i in x], cpu, width=0.4, label="CPU", color="#8172b2")
    b.set_xticks(list(x))
    b.set_xticklabels(names)
    b.axhline(0, color="black", linewidth=0.8)
    b.set_ylabel("overhead vs. failure-free ha=none (%)")
    b.set_title("runtime overhead (includes recovery traffic)")
    b.legend(fontsize=8)
    fig.suptitle("hapair compare: network %s, seed %s, driver %s" % (rows[0]["network"], rows[0]["seed"], rows[0]["driver"]))
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
