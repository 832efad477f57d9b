"""Plot of `hapair compare`: recovery time (detection / rest of recovery) from the crash runs and
runtime overhead from the failure-free runs, per approach: medians, with error bars from the
minimum to the maximum over the repetitions.

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


def spread(rows, figure):
    """Medians (0 when not measured) and the error bars (below, above) of one figure."""
    med, lo, hi = [], [], []
    for r in rows:
        m, a, b = num(r, figure + "_median"), num(r, figure + "_min"), num(r, figure + "_max")
        med.append(m or 0.0)
        lo.append(m - a if m is not None and a is not None else 0.0)
        hi.append(b - m if m is not None and b is not None else 0.0)
    return med, [lo, hi]


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    names = [r["approach"] for r in rows]
    x = list(range(len(names)))
    det, _ = spread(rows, "detection_ms")
    rec, rec_err = spread(rows, "recovery_ms")
    fig, (a, b) = plt.subplots(1, 2, figsize=(11.5, 4.4))
    rest = [max(0.0, r - d) for r, d in zip(rec, det)]
    a.bar(x, det, label="detection", color="#c44e52")
    a.bar(x, rest, bottom=det, label="rest of recovery", color="#4c72b0")
    a.errorbar(x, rec, yerr=rec_err, fmt="none", ecolor="black", capsize=4, linewidth=1, label="min..max")
    for i, row in enumerate(rows):
        lost = row.get("lost_median", "")
        label = row["verdict"] + (f"\nlost {float(lost):.0f}" if lost not in ("", "0.000") else "")
        if num(row, "recovery_ms_median") is None:
            label = "no recovery\n" + label
        a.text(i, rec[i] + rec_err[1][i] + 0.5, label, ha="center", va="bottom", fontsize=8)
    top = max([r + e for r, e in zip(rec, rec_err[1])] + det + [1.0])
    a.set_ylim(0, top * 1.35)
    a.set_xticks(x)
    a.set_xticklabels(names)
    a.set_ylabel("recovery time (ms): failure to first new output")
    a.set_title("recovery after SIGKILL of %s at %s s (crash runs)" % (rows[0]["victim"], rows[0]["fail_at_s"]),
                fontsize=10)
    a.legend(fontsize=8, loc="upper right")
    # The none row is the baseline: no overhead bars.
    bw, bw_err = spread(rows, "bandwidth_overhead_pct")
    cpu, cpu_err = spread(rows, "cpu_overhead_pct")
    b.bar([i - 0.2 for i in x], bw, width=0.4, yerr=bw_err, capsize=3, label="bandwidth", color="#55a868")
    b.bar([i + 0.2 for i in x], cpu, width=0.4, yerr=cpu_err, capsize=3, label="CPU", color="#8172b2")
    for i, row in enumerate(rows):
        if row["approach"] == "none":
            b.text(i, 0, "baseline", ha="center", va="bottom", fontsize=8)
    b.set_xticks(x)
    b.set_xticklabels(names)
    b.axhline(0, color="black", linewidth=0.8)
    b.set_ylabel("overhead vs. failure-free ha=none (%)")
    b.set_title("runtime overhead during normal operation (failure-free runs)", fontsize=10)
    b.legend(fontsize=8)
    fig.suptitle("hapair compare: network %s, seed %s, driver %s; median and min..max of %s repetitions"
                 % (rows[0]["network"], rows[0]["seed"], rows[0]["driver"], rows[0]["repeat"]))
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
