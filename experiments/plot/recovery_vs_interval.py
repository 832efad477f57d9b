"""Plot of `hapair experiment recovery_vs_interval`: recovery time (failure to the first new output)
against the communication interval per approach, and the part of it after detection.

usage: /usr/bin/python3 recovery_vs_interval.py recovery_vs_interval.csv recovery_vs_interval.png
(writes recovery_vs_interval.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def after_detection(r):
    rec, det = hp.num(r, "recovery_ms"), hp.num(r, "detection_ms")
    return None if rec is None or det is None else rec - det


def main(src, dst):
    rows = hp.select(hp.read_rows(src), sweep="interval_ms", failure=True)
    fig, (a, b) = hp.figure(2, height=3.6)
    hp.draw_sweep(a, rows, "recovery_ms", "recovery time (ms)")
    hp.draw_sweep(b, rows, after_detection, "recovery time after detection (ms)")
    for ax in (a, b):
        ax.set_xlabel("interval (ms): checkpoint interval = ack interval")
        hp.log_y(ax)
    lost = [hp.num(r, "lost") for r in hp.select(rows, approach="amnesia")]
    if lost:
        b.text(0.02, 0.02, "amnesia lost %d..%d tuples per run" % (min(lost), max(lost)), transform=b.transAxes,
               va="bottom", fontsize=7)
    hp.legend_above(a)
    hp.finish(fig, dst, hp.title_of(rows, "recovery time (failure to first new output) vs communication interval, "
                                    "SIGKILL of %s" % (rows[0]["victim"] if rows else "?")))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
