"""Plot of `hapair experiment workloads`: per workload network, two grouped bar charts: the
recovery time after the SIGKILL (left) and the bandwidth overhead of the failure-free runs
against ha=none (right), one bar per approach; bars: medians over the seeds; whiskers: min..max;
dots: every run.

usage: /usr/bin/python3 workloads.py workloads.csv workloads.png
(writes workloads.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402

ORDER = ["amnesia", "upstream", "passive", "active"]


def main(src, dst):
    rows = hp.read_rows(src)
    networks = []
    for r in rows:
        if r["network"] not in networks:
            networks.append(r["network"])
    names = [a for a in ORDER if a in hp.approaches(rows)]
    fig, (left, right) = hp.figure(2, width=11.0, height=4.2)
    width = 0.8 / max(1, len(names))
    for panel, failure, column, label in ((left, True, "recovery_ms", "recovery (ms, first new output after the failure)"),
                                          (right, False, "bandwidth_overhead_pct", "bandwidth overhead against none (%)")):
        for k, a in enumerate(names):
            colour = hp.STYLE.get(a, ("#999999", "o"))[0]
            xs, meds, lo, hi, dots_x, dots_y = [], [], [], [], [], []
            for i, n in enumerate(networks):
                values = [v for v in (hp.num(r, column) for r in hp.select(rows, approach=a, network=n, failure=failure))
                          if v is not None]
                if not values:
                    continue
                x = i - 0.4 + width * (k + 0.5)
                m = hp.median(values)
                xs.append(x)
                meds.append(m)
                lo.append(max(0.0, m - min(values)))
                hi.append(max(0.0, max(values) - m))
                dots_x += [x] * len(values)
                dots_y += values
            if xs:
                panel.bar(xs, meds, width=width * 0.9, color=colour, label=a)
                panel.errorbar(xs, meds, yerr=[lo, hi], fmt="none", ecolor="black", capsize=2, linewidth=0.8)
                panel.scatter(dots_x, dots_y, color="black", alpha=0.35, s=6, linewidths=0)
        panel.set_xticks(range(len(networks)))
        panel.set_xticklabels([n.replace("nexmark_", "nexmark:") for n in networks], rotation=30, ha="right", fontsize=8)
        panel.set_ylabel(label, fontsize=8)
        panel.grid(True, axis="y", alpha=0.3)
    hp.legend_above(left)
    seeds = len({r["seed"] for r in rows})
    hp.finish(fig, dst, "recovery and runtime overhead per approach on the workloads (SIGKILL of the fragment with state)\n"
              "driver %s, %d seed(s); bars: medians; whiskers: min..max; dots: every run" %
              (rows[0]["driver"] if rows else "?", seeds))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
