"""Plot of `hapair experiment tradeoff`: the paper's central picture, recovery time against runtime
overhead, one curve per approach through its interval points (each labelled with its interval).

usage: /usr/bin/python3 tradeoff.py tradeoff.csv tradeoff.png
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def curve(rows, approach, overhead):
    rec = hp.points(hp.select(rows, approach=approach, sweep="interval_ms", failure=True), "recovery_ms")
    over = hp.points(hp.select(rows, approach=approach, sweep="interval_ms", failure=False), overhead)
    return [(x, over[x], rec[x]) for x in sorted(set(rec) & set(over))]


def main(src, dst):
    rows = hp.read_rows(src)
    fig, axes = hp.plt.subplots(1, 2, figsize=(12, 5))
    for ax, (col, label) in zip(axes, [("bandwidth_overhead_pct", "extra data-plane bytes vs ha=none (%)"),
                                       ("cpu_overhead_pct", "extra CPU time vs ha=none (%)")]):
        for a in hp.approaches(rows):
            if a == "none":
                continue
            pts = curve(rows, a, col)
            if not pts:
                continue
            colour, marker = hp.STYLE.get(a, ("black", "o"))
            xs = [hp.median(o) for _, o, _ in pts]
            ys = [hp.median(r) for _, _, r in pts]
            xerr = [[m - min(o) for m, (_, o, _) in zip(xs, pts)], [max(o) - m for m, (_, o, _) in zip(xs, pts)]]
            yerr = [[m - min(r) for m, (_, _, r) in zip(ys, pts)], [max(r) - m for m, (_, _, r) in zip(ys, pts)]]
            ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, color=colour, marker=marker, capsize=3, label=a)
            for (x, _, _), px, py in zip(pts, xs, ys):
                ax.annotate("%g" % x, (px, py), textcoords="offset points", xytext=(4, 4), fontsize=7, color=colour)
        ax.set_xlabel(label)
        ax.set_ylabel("recovery time (ms): failure to first new output")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=8)
    hp.finish(fig, dst, hp.title_of(rows, "recovery time vs runtime overhead (labels: interval_ms)"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
