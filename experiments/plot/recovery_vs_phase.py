"""Plot of `hapair experiment recovery_vs_phase`: recovery time against the failure's moment
(ms after the base failure instant, the victim's checkpoints dashed: passive standby's sawtooth),
and against the measured time since the victim's last checkpoint (every run; binned medians with
their 95 % bootstrap CI).

usage: /usr/bin/python3 recovery_vs_phase.py recovery_vs_phase.csv recovery_vs_phase.png
(writes recovery_vs_phase.pdf beside the PNG)
"""
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
import hapair_plot as hp  # noqa: E402


def checkpoint_offsets(rows, tolerance_ms=10.0):
    """The victim's checkpoints on the offset axis: offset - since_checkpoint of every passive run,
    clustered (a cluster within tolerance_ms is one checkpoint), each cluster's median."""
    cps = sorted(hp.num(r, "x") - hp.num(r, "since_checkpoint_ms") for r in hp.select(rows, approach="passive")
                 if hp.num(r, "since_checkpoint_ms") is not None and hp.num(r, "x") is not None)
    clusters = []
    for c in cps:
        if clusters and c - clusters[-1][-1] <= tolerance_ms:
            clusters[-1].append(c)
        else:
            clusters.append([c])
    return [hp.median(c) for c in clusters]


def main(src, dst):
    rows = hp.select(hp.read_rows(src), sweep="fail_offset_ms", failure=True)
    fig, (a, b) = hp.figure(2, height=3.7)
    hp.draw_sweep(a, rows, "recovery_ms", "recovery time (ms)", logx=False)
    xs = [hp.num(r, "x") for r in rows if hp.num(r, "x") is not None]
    for c in checkpoint_offsets(rows):
        if xs and min(xs) - 20 <= c <= max(xs) + 20:
            a.axvline(c, color=hp.STYLE["passive"][0], linestyle="--", linewidth=0.8, alpha=0.7)
    a.set_xlabel("failure moment (ms after the base instant; dashed: checkpoints)")
    a.set_ylim(bottom=0)
    hp.legend_above(a)
    interval = None
    for r in rows:
        if hp.num(r, "since_checkpoint_ms") is not None:
            interval = max(interval or 0.0, hp.num(r, "since_checkpoint_ms"))
    for n in hp.approaches(rows):
        colour, marker = hp.STYLE.get(n, ("black", "o"))
        pts = [(hp.num(r, "since_checkpoint_ms"), hp.num(r, "recovery_ms")) for r in hp.select(rows, approach=n)]
        pts = [(x, y) for x, y in pts if x is not None and y is not None]
        if not pts:
            continue
        b.scatter([x for x, _ in pts], [y for _, y in pts], color=colour, alpha=0.3, s=10, linewidths=0)
        width = (interval or 1.0) / 5.0
        bins = {}
        for x, y in pts:
            bins.setdefault(int(x // width), []).append((x, y))
        keys = sorted(bins)
        # Each bin's median drawn at the median time since the checkpoint of its runs (not at the
        # bin's middle, which the interval estimated from the data need not match).
        hp.draw_errorbar(b, [hp.median([x for x, _ in bins[k]]) for k in keys], [[y for _, y in bins[k]] for k in keys],
                         colour, marker, n)
    b.set_xlabel("time since the victim's last checkpoint at the failure (ms)")
    b.set_ylabel("recovery time (ms)")
    b.set_ylim(bottom=0)
    b.grid(True, alpha=0.3)
    hp.finish(fig, dst, hp.title_of(rows, "recovery time vs the failure's moment in the checkpoint interval, SIGKILL "
                                    "of %s" % (rows[0]["victim"] if rows else "?"),
                                    hp.CI_TEXT + " (right: medians of bins of a fifth of the interval)"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
