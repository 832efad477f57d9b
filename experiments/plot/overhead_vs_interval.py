"""Plot of `hapair experiment overhead_vs_interval`: extra bandwidth, CPU and tuples processed of
each approach relative to the failure-free ha=none run with the same knobs, against the interval.

usage: /usr/bin/python3 overhead_vs_interval.py overhead_vs_interval.csv overhead_vs_interval.png
(writes overhead_vs_interval.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def main(src, dst):
    rows = [r for r in hp.select(hp.read_rows(src), sweep="interval_ms", failure=False) if r["approach"] != "none"]
    fig, axes = hp.figure(3, height=3.4)
    for ax, (col, label) in zip(axes, [("bandwidth_overhead_pct", "extra data-plane bytes (%)"),
                                       ("cpu_overhead_pct", "extra CPU time (%)"),
                                       ("processing_overhead_pct", "extra tuples processed (%)")]):
        hp.draw_sweep(ax, rows, col, label + ", vs ha=none")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("interval (ms): checkpoint = ack interval")
    hp.legend_above(axes[0])
    hp.finish(fig, dst, hp.title_of(rows, "runtime overhead vs communication interval (failure-free runs)"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
