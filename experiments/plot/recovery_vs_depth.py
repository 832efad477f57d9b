"""Plot of `hapair experiment recovery_vs_depth`: recovery time (failure to the first new output the
victim's replacement produced, replacement_output_ms: in a chain the first new output at the sink
can still be one the old primary sent before it died), the output queue retained before
the victim (the first stage of the chain) and the sum of every node's largest output queue,
against the depth of the chain.

usage: /usr/bin/python3 recovery_vs_depth.py recovery_vs_depth.csv recovery_vs_depth.png
(writes recovery_vs_depth.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def main(src, dst):
    rows = hp.select(hp.read_rows(src), sweep="chain_depth", failure=True)
    fig, axes = hp.figure(3, height=3.5)
    for ax, (col, label) in zip(axes, [("replacement_output_ms", "recovery time (ms)"),
                                       ("upstream_queue_tuples_max", "queue retained before the victim (tuples)"),
                                       ("queue_tuples_max_sum", "sum of every node's largest queue (tuples)")]):
        hp.draw_sweep(ax, rows, col, label, logx=False)
        ax.set_xlabel("servers in the chain (operator fragments)")
        ax.set_ylim(bottom=0)
    hp.legend_above(axes[0])
    hp.finish(fig, dst, hp.title_of(rows, "recovery time (failure to the replacement's first new output) and retained "
                                    "queues vs chain depth, SIGKILL of %s (the first stage)" % (rows[0]["victim"] if rows else "?")))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
