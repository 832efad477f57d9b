"""Plot of `hapair experiment recovery_vs_state`: recovery time against the aggregate's window
(the state to rebuild) and against the input rate (the load).

usage: /usr/bin/python3 recovery_vs_state.py recovery_vs_state.csv recovery_vs_state.png
(writes recovery_vs_state.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def main(src, dst):
    rows = hp.select(hp.read_rows(src), failure=True)
    fig, axes = hp.figure(2, height=3.6)
    for ax, (sweep, label) in zip(axes, [("window_ms", "aggregate window (ms), slide 20 ms"),
                                         ("rate_tps", "source rate (tuples/s)")]):
        hp.draw_sweep(ax, hp.select(rows, sweep=sweep), "recovery_ms", "recovery time (ms)")
        ax.set_xlabel(label)
        hp.log_y(ax)
    hp.legend_above(axes[0])
    hp.finish(fig, dst, hp.title_of(rows, "recovery time vs operator state and input rate, SIGKILL of %s" %
                                    (rows[0]["victim"] if rows else "?")))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
