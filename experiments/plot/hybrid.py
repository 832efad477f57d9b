"""Plot of `hapair experiment hybrid`: the trade-off plane of ICDCS 2010. Left: recovery time
after the SIGKILL against the messages sent beyond ha=none's in the failure-free run; right: the
same against the bytes. One point per approach at the medians over the seeds, whiskers min..max
both ways (the cost comes from the failure-free runs, the recovery from the runs with the SIGKILL,
so the two are not paired run by run).

usage: /usr/bin/python3 hybrid.py hybrid.csv hybrid.png
(writes hybrid.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402

ORDER = ["amnesia", "upstream", "passive", "active", "hybrid"]


def extra(row, column, baseline):
    v, b = hp.num(row, column), hp.num(row, baseline)
    if v is None or b is None:
        return None
    return v - b


def main(src, dst):
    rows = hp.read_rows(src)
    names = [a for a in ORDER if a in hp.approaches(rows)]
    fig, panels = hp.figure(2, width=11.0, height=4.2)
    for panel, column, baseline, label in (
            (panels[0], "messages_total", "baseline_messages_total", "messages beyond ha none's (failure-free run)"),
            (panels[1], "bytes_total", "baseline_bytes_total", "bytes beyond ha none's (failure-free run)")):
        for a in names:
            colour, marker = hp.STYLE.get(a, ("#999999", "o"))
            costs = [v for v in (extra(r, column, baseline) for r in hp.select(rows, approach=a, failure=False))
                     if v is not None]
            recoveries = [v for v in (hp.num(r, "recovery_ms") for r in hp.select(rows, approach=a, failure=True))
                          if v is not None]
            if not costs or not recoveries:
                continue
            x, y = hp.median(costs), hp.median(recoveries)
            panel.errorbar([x], [y], xerr=[[x - min(costs)], [max(costs) - x]], yerr=[[y - min(recoveries)], [max(recoveries) - y]],
                           fmt=marker, color=colour, ecolor=colour, capsize=3, markersize=8, label=a)
        panel.set_xlabel(label, fontsize=8)
        panel.set_ylabel("recovery (ms, first new output after the failure)", fontsize=8)
        panel.grid(True, alpha=0.3)
    hp.legend_above(panels[0])
    seeds = len({r["seed"] for r in rows})
    hp.finish(fig, dst, "hybrid standby on the trade-off plane: a rate spike, then a SIGKILL of the aggregate\n"
              "driver %s, %d seed(s); points: medians; whiskers: min..max" % (rows[0]["driver"] if rows else "?", seeds))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
