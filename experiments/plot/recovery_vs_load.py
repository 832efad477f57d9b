"""Plot of `hapair experiment recovery_vs_load`: catch-up time (failure to the first new output
whose latency is back at the pre-failure p99; runs that never got back are left out) and recovery
time against the load rho of the failed server, with c/(1 - rho) through each approach's
lowest-load median (dotted) for comparison.

usage: /usr/bin/python3 recovery_vs_load.py recovery_vs_load.csv recovery_vs_load.png
(writes recovery_vs_load.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def main(src, dst):
    rows = hp.select(hp.read_rows(src), sweep="load", failure=True)
    caught = [r for r in rows if r.get("catchup_reached_normal") == "true"]
    fig, (a, b) = hp.figure(2, height=3.7)
    hp.draw_sweep(a, caught, "catchup_ms", "catch-up time (ms)", logx=False)
    hp.draw_sweep(b, rows, "recovery_ms", "recovery time (ms)", logx=False)
    for n in ("passive", "upstream"):
        pts = hp.points(hp.select(caught, approach=n), "catchup_ms")
        if len(pts) < 2:
            continue
        lo = min(pts)
        c = hp.median(pts[lo]) * (1 - lo)
        xs = [lo + (max(pts) - lo) * i / 50.0 for i in range(51)]
        a.plot(xs, [c / (1 - x) for x in xs], color=hp.STYLE[n][0], linestyle=":", linewidth=1)
    for ax in (a, b):
        ax.set_xlabel("load rho of the failed server")
        hp.log_y(ax)
    hp.legend_above(a)
    left = len(rows) - len(caught)
    note = "; %d run(s) whose latency never came back left out of catch-up" % left if left else ""
    hp.finish(fig, dst, hp.title_of(rows, "catch-up and recovery time vs load, SIGKILL of %s (dotted: c/(1 - rho))%s" %
                                    (rows[0]["victim"] if rows else "?", note)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
