"""Rendering of `hapair experiment semantics_table`: approach x network (operator class), each cell
the measured verdict over the seeds with the lost / duplicate counts, coloured by verdict (paler
when a stream was not judged: the Union interleaving it depends on was unknown).

usage: /usr/bin/python3 semantics_table.py semantics_table.csv semantics_table.png
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402

COLOURS = {"precise": "#b7e4c7", "rollback": "#ffe8a1", "gap": "#f4b6b6"}


def main(src, dst):
    rows = hp.read_rows(src, keep_disturbed=True)
    networks = []
    for r in rows:
        if r["network"] not in networks:
            networks.append(r["network"])
    classes = {r["network"]: r["network_class"] for r in rows}
    names = hp.approaches(rows)
    text, colours = [], []
    for a in names:
        line, cols = [], []
        for n in networks:
            runs = hp.select(rows, approach=a, network=n)
            if not runs:
                line.append("same as active\n(no arbitrary operator)" if a == "active_nodet" else "not run")
                cols.append("#eeeeee")
                continue
            verdicts = sorted({r["verdict"] for r in runs})
            lost = sum(int(r["lost"]) for r in runs)
            dups = sum(int(r["duplicates"]) for r in runs)
            worst = "gap" if "gap" in verdicts else ("rollback" if "rollback" in verdicts else "precise")
            diff = sum(int(r["differing"]) for r in runs)
            # Streams left out of the verdict: the Union interleaving they depend on is unknown.
            unjudged = sorted({s for r in runs for s in r.get("not_judged", "").split()})
            note = "\n%s not judged" % ", ".join(unjudged) if unjudged else ""
            line.append("%s\nlost %d, dup %d, diff %d (%d runs)%s" % ("/".join(verdicts), lost, dups, diff, len(runs), note))
            cols.append(COLOURS.get(worst, "#ffffff") if not unjudged else "#dde8e0")
        text.append(line)
        colours.append(cols)
    fig, ax = hp.plt.subplots(figsize=(2.6 + 2.4 * len(networks), 1.0 + 0.6 * len(names)))
    ax.axis("off")
    table = ax.table(cellText=text, cellColours=colours, rowLabels=names,
                     colLabels=["%s\n(%s)" % (n, classes[n]) for n in networks], loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1, 3.2)
    seeds = len({r["seed"] for r in rows})
    hp.finish(fig, dst, "measured recovery type per approach and operator class (SIGKILL of the class's operator)\n"
              "driver %s, %d seed(s) per cell; lost / duplicates / differing summed over the seeds" %
              (rows[0]["driver"] if rows else "?", seeds))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
