"""Plot of `hapair experiment trimming_knowledge`: upstream backup's retained output queue (at the
victim's upstream neighbour) and recovery time with exact cause functions (a band: it does not
depend on the retention; its median and the 95 % bootstrap CI of that median) and with the
conservative rule against its retention.

usage: /usr/bin/python3 trimming_knowledge.py trimming_knowledge.csv trimming_knowledge.png
(writes trimming_knowledge.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def main(src, dst):
    rows = hp.select(hp.read_rows(src), failure=True)
    cons = hp.select(rows, approach="upstream_conservative")
    exact = hp.select(rows, approach="upstream_exact")
    fig, axes = hp.figure(2, height=3.6)
    for ax, (col, label) in zip(axes, [("upstream_queue_tuples_max", "retained output queue, max (tuples)"),
                                       ("recovery_ms", "recovery time (ms)")]):
        hp.draw_sweep(ax, cons, col, label, logx=True)
        vals = [hp.num(r, col) for r in exact if hp.num(r, col) is not None]
        if vals:
            colour, _ = hp.STYLE["upstream_exact"]
            lo, hi = hp.ci_median(vals)
            ax.axhline(hp.median(vals), color=colour, label="upstream_exact (median, CI band)")
            ax.axhspan(lo, hi, color=colour, alpha=0.2)
        ax.set_xlabel("conservative retention (ms)")
        ax.set_ylim(bottom=0)
    hp.legend_above(axes[0])
    hp.finish(fig, dst, hp.title_of(rows, "upstream backup: exact cause functions vs conservative trimming"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
