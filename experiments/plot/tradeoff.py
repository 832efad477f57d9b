"""Plot of `hapair experiment tradeoff`: the paper's central picture, recovery time against runtime
overhead, one curve per approach through its interval points (each labelled with its interval);
both axes show the median over the seeds with its 95 % bootstrap CI.

usage: /usr/bin/python3 tradeoff.py tradeoff.csv tradeoff.png
(writes tradeoff.pdf beside the PNG)
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
    fig, axes = hp.figure(2, height=3.9)
    for ax, (col, label) in zip(axes, [("bandwidth_overhead_pct", "extra data-plane bytes vs ha=none (%)"),
                                       ("cpu_overhead_pct", "extra CPU time vs ha=none (%)")]):
        labels = []
        for a in hp.approaches(rows):
            if a == "none":
                continue
            pts = curve(rows, a, col)
            if not pts:
                continue
            colour, marker = hp.STYLE.get(a, ("black", "o"))
            xs = [hp.median(o) for _, o, _ in pts]
            ys = [hp.median(r) for _, _, r in pts]
            xci = [hp.ci_median(o) for _, o, _ in pts]
            yci = [hp.ci_median(r) for _, _, r in pts]
            xerr = [[m - c[0] for m, c in zip(xs, xci)], [c[1] - m for m, c in zip(xs, xci)]]
            yerr = [[m - c[0] for m, c in zip(ys, yci)], [c[1] - m for m, c in zip(ys, yci)]]
            ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, color=colour, marker=marker, capsize=2, label=a, markersize=5)
            labels += [(px, py, "%g" % x, colour) for (x, _, _), px, py in zip(pts, xs, ys)]
        ax.set_xlabel(label)
        ax.set_ylabel("recovery time (ms)")
        hp.log_y(ax)
        if col == "cpu_overhead_pct":
            # Most approaches cost a few per cent of CPU, active standby about double: a symmetric
            # log axis keeps both ends readable.
            ax.set_xscale("symlog", linthresh=10)
            ax.set_xticks([0, 5, 10, 20, 50, 100])
            ax.xaxis.set_major_formatter(hp.FuncFormatter(lambda v, _: "%g" % v))
        ax.grid(True, alpha=0.3)
        hp.place_labels(ax, labels)
    hp.legend_above(axes[0])
    hp.finish(fig, dst, hp.title_of(rows, "recovery time vs runtime overhead; point labels: interval (ms)"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
