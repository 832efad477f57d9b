"""Plot of `hapair experiment recovery_breakdown`: per approach, the medians of the phases of
recovery as stacked bars: detection (failure..detection), takeover (detection..takeover),
replay/rebuild (takeover..first new output), catch-up (first new output..latency back to
normal); whiskers: the 95 % bootstrap CI of the median of the total recovery time (left) and of
the catch-up end (right); dots: every run's totals.

usage: /usr/bin/python3 recovery_breakdown.py recovery_breakdown.csv recovery_breakdown.png
(writes recovery_breakdown.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402

SEGMENTS = [("detection", "#c44e52"), ("takeover", "#dd8452"), ("replay/rebuild", "#4c72b0"), ("catch-up", "#55a868")]


def phases(r):
    d, t, rec, c = (hp.num(r, k) for k in ("detection_ms", "takeover_ms", "recovery_ms", "catchup_ms"))
    if None in (d, t, rec, c):
        return None
    return [d, t - d, rec - t, c - rec]


def main(src, dst):
    rows = hp.select(hp.read_rows(src), failure=True)
    names = hp.approaches(rows)
    fig, ax = hp.figure(1, width=6.4, height=4.0)
    for i, a in enumerate(names):
        runs = [p for p in (phases(r) for r in hp.select(rows, approach=a)) if p is not None]
        if not runs:
            ax.text(i, 0, "not measured", ha="center", fontsize=8)
            continue
        med = [hp.median([p[k] for p in runs]) for k in range(4)]
        bottom = 0.0
        for k, (label, colour) in enumerate(SEGMENTS):
            ax.bar(i, med[k], bottom=bottom, color=colour, label=label if i == 0 else None, width=0.6)
            bottom += med[k]
        for end in (3, 4):  # total recovery (3 phases) and catch-up end (4 phases)
            totals = [sum(p[:end]) for p in runs]
            m = sum(med[:end])
            lo, hi = hp.ci_median(totals)
            x = i + (0.12 if end == 4 else -0.12)
            ax.errorbar(x, m, yerr=[[max(0.0, m - lo)], [max(0.0, hi - m)]], color="black", capsize=3, linewidth=1)
            ax.scatter([x] * len(totals), totals, color="black", alpha=0.3, s=8, linewidths=0)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("ms after the failure (medians of the phases)")
    ax.grid(True, axis="y", alpha=0.3)
    hp.legend_above(ax)
    hp.finish(fig, dst, hp.title_of(rows, "recovery time breakdown, SIGKILL of %s" % (rows[0]["victim"] if rows else "?"),
                                    "bars: medians of the phases; whiskers: 95 % bootstrap CI of the median\n"
                                    "of the first new output (left) and of the catch-up end (right); dots: every run"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
