"""Plot of `hapair experiment overhead_vs_interval`: extra bandwidth, CPU and tuples processed of
each approach relative to the failure-free ha=none run with the same knobs, against the interval.

usage: /usr/bin/python3 overhead_vs_interval.py overhead_vs_interval.csv overhead_vs_interval.png
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def main(src, dst):
    rows = hp.select(hp.read_rows(src), sweep="interval_ms", failure=False)
    fig, axes = hp.plt.subplots(1, 3, figsize=(14, 4.6))
    for ax, (col, label) in zip(axes, [("bandwidth_overhead_pct", "extra data-plane bytes (%)"),
                                       ("cpu_overhead_pct", "extra CPU time (%)"),
                                       ("processing_overhead_pct", "extra tuples processed (%)")]):
        hp.draw_sweep(ax, rows, col, label + " vs ha=none")
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xlabel("interval_ms (checkpoint interval = ack interval)")
    axes[0].legend(fontsize=8)
    hp.finish(fig, dst, hp.title_of(rows, "runtime overhead vs communication interval (failure-free runs)"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
