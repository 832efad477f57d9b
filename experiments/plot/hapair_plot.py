"""Shared pieces of the experiment plots: reading an experiment CSV (one row per run, the columns
of src/harness/experiment_runs.cpp), grouping runs into points, and drawing a point as its median
over the seeds with min/max whiskers and every run as a faint dot.

Run the scripts with Debian's /usr/bin/python3 (the one python3-matplotlib is installed for).
"""
import csv
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)

# One colour and marker per approach, the same in every figure.
STYLE = {
    "none": ("#7f7f7f", "x"),
    "amnesia": ("#c44e52", "v"),
    "upstream": ("#55a868", "s"),
    "upstream_exact": ("#55a868", "s"),
    "upstream_conservative": ("#8c564b", "D"),
    "passive": ("#4c72b0", "o"),
    "active": ("#8172b2", "^"),
    "active_nodet": ("#dd8452", "<"),
}
ORDER = ["none", "amnesia", "upstream", "upstream_exact", "upstream_conservative", "passive", "active", "active_nodet"]


def read_rows(path, keep_disturbed=False):
    """The rows of an experiment CSV. Unless `keep_disturbed`, disturbed runs (a takeover before
    the failure, a false detection) are left out, as the claim checks leave them out: the run does
    not measure its point; DROPPED[0] counts them for the title."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if keep_disturbed:
        return rows
    kept = [r for r in rows if r.get("takeovers_before_failure", "0") in ("0", "")
            and r.get("disturbed", "false") in ("false", "0", "")]
    DROPPED[0] = len(rows) - len(kept)
    return kept


DROPPED = [0]


def num(row, key):
    v = row.get(key, "")
    if v in ("", None):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def median(values):
    s = sorted(values)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def approaches(rows):
    present = {r["approach"] for r in rows}
    return [a for a in ORDER if a in present] + sorted(present - set(ORDER))


def select(rows, approach=None, sweep=None, failure=None, network=None):
    out = []
    for r in rows:
        if approach is not None and r["approach"] != approach:
            continue
        if sweep is not None and r["sweep"] != sweep:
            continue
        if failure is not None and (r["failure"] == "true") != failure:
            continue
        if network is not None and r["network"] != network:
            continue
        out.append(r)
    return out


def points(rows, value):
    """{x: [values over the seeds]} for the rows that have both x and the value; `value` is a
    column name or a function of the row."""
    get = value if callable(value) else (lambda r: num(r, value))
    out = {}
    for r in rows:
        x, v = num(r, "x"), get(r)
        if x is None or v is None:
            continue
        out.setdefault(x, []).append(v)
    return dict(sorted(out.items()))


def draw_sweep(ax, rows, value, label, logx=True):
    """One line per approach: the medians over x, min/max whiskers, every run as a dot."""
    for a in approaches(rows):
        pts = points(select(rows, approach=a), value)
        if not pts:
            continue
        colour, marker = STYLE.get(a, ("black", "o"))
        xs = list(pts)
        med = [median(v) for v in pts.values()]
        lo = [m - min(v) for m, v in zip(med, pts.values())]
        hi = [max(v) - m for m, v in zip(med, pts.values())]
        ax.errorbar(xs, med, yerr=[lo, hi], color=colour, marker=marker, capsize=3, label=a, linewidth=1.5)
        for x, v in pts.items():
            ax.scatter([x] * len(v), v, color=colour, alpha=0.25, s=12)
    if logx:
        ax.set_xscale("log")
    ax.set_ylabel(label)
    ax.grid(True, alpha=0.3)


def title_of(rows, what):
    if not rows:
        return what
    seeds = sorted({r["seed"] for r in rows}, key=lambda s: int(s))
    left_out = "; %d disturbed run(s) left out" % DROPPED[0] if DROPPED[0] else ""
    return "%s\nnetwork %s, driver %s, %d seed(s) per point (median, min/max whiskers, dots = runs)%s" % (
        what, rows[0]["network"], rows[0]["driver"], len(seeds), left_out)


def finish(fig, path, title):
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(path, dpi=110)


def is_nan(v):
    return v is None or (isinstance(v, float) and math.isnan(v))
