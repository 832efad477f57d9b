"""Shared pieces of the experiment plots: reading an experiment CSV (one row per run, the columns
of src/campaigns/experiment_runs.cpp), grouping runs into points, and drawing a point as the median
over its seeds with a 95 % confidence interval of that median, and every run as a faint dot.

Statistics (every figure says so in its caption): the marker is the median over the seeds; the
whiskers are the 95 % percentile-bootstrap confidence interval of the median (CI_RESAMPLES
resamples of the seeds' values with replacement, a fixed generator seed, so the same CSV always
gives the same figure). With 5 seeds a bootstrap interval of the median is coarse (it lies between
the second-smallest and second-largest value at best), which is why every run is drawn as well.

Every figure is written twice: the PNG named on the command line and a PDF beside it (vector,
for a paper). Log axes are labelled at the swept values.

Run the scripts with Debian's /usr/bin/python3 (the one python3-matplotlib is installed for).
"""
import csv
import math
import os
import random

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)
from matplotlib.ticker import FuncFormatter, NullLocator  # noqa: E402

# Fonts that survive a two-column paper layout; embedded as TrueType in the PDF.
matplotlib.rcParams.update({
    "font.size": 9,
    "axes.titlesize": 9,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
})

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
    "hybrid": ("#937860", "P"),
}
ORDER = ["none", "amnesia", "upstream", "upstream_exact", "upstream_conservative", "passive", "active", "active_nodet",
         "hybrid"]

CI_LEVEL = 0.95
CI_RESAMPLES = 4000
CI_TEXT = "markers: median over the seeds; whiskers: 95 % bootstrap CI of the median; dots: every run"


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


def ci_median(values, level=CI_LEVEL, resamples=CI_RESAMPLES):
    """The percentile-bootstrap confidence interval of the median of `values`: (low, high).
    One value: (v, v). Deterministic: the generator is seeded from the values themselves."""
    v = sorted(values)
    if len(v) < 2:
        return (v[0], v[0]) if v else (None, None)
    rng = random.Random(repr(v))
    meds = sorted(median([rng.choice(v) for _ in v]) for _ in range(resamples))
    lo = meds[int(math.floor((1 - level) / 2 * (resamples - 1)))]
    hi = meds[int(math.ceil((1 + level) / 2 * (resamples - 1)))]
    return lo, hi


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


def number_label(v, thousands=False):
    """A swept value as a tick label: 50, 1000, 0.9; with `thousands`, 1k, 2.5k, 10k from 1000 on."""
    if (v >= 10000 or (thousands and v >= 1000)) and v % 100 == 0:
        return "%gk" % (v / 1000)
    return "%g" % v


def label_swept(ax, xs, log, thousands=False):
    """Ticks at exactly the swept values, labelled with them, and no minor ticks."""
    xs = sorted(set(xs))
    if not xs:
        return
    if log:
        ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: number_label(v, thousands)))
    ax.xaxis.set_minor_locator(NullLocator())
    if log and len(xs) > 1:
        ax.set_xlim(xs[0] / 1.25, xs[-1] * 1.25)


def log_y(ax):
    """A log y axis labelled in plain numbers (10, 20, 50, 100, not 10^1 or 2x10^1)."""
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: "%g" % v)
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: "%g" % v if str("%g" % v)[0] in "25" else ""))


def dodge(x, i, n, log, span):
    """Shifts approach i of n a little sideways at the same x, so whiskers do not cover each other."""
    if n <= 1:
        return x
    k = i - (n - 1) / 2.0
    return x * (1.0 + 0.035 * k) if log else x + 0.012 * span * k


def draw_errorbar(ax, xs, values, colour, marker, label, linestyle="-"):
    """Medians with CI whiskers through the x's, each run as a dot at its x."""
    med = [median(v) for v in values]
    cis = [ci_median(v) for v in values]
    lo = [m - c[0] for m, c in zip(med, cis)]
    hi = [c[1] - m for m, c in zip(med, cis)]
    ax.errorbar(xs, med, yerr=[lo, hi], color=colour, marker=marker, capsize=3, label=label, linewidth=1.5,
                markersize=5, linestyle=linestyle)
    for x, v in zip(xs, values):
        ax.scatter([x] * len(v), v, color=colour, alpha=0.25, s=10, linewidths=0)


def draw_sweep(ax, rows, value, label, logx=True, thousands=False):
    """One line per approach: the medians over x with CI whiskers, every run as a dot; the x axis
    labelled at the swept values."""
    names = [a for a in approaches(rows) if points(select(rows, approach=a), value)]
    all_x = sorted({num(r, "x") for r in rows if num(r, "x") is not None})
    span = (all_x[-1] - all_x[0]) if len(all_x) > 1 else 1.0
    for i, a in enumerate(names):
        pts = points(select(rows, approach=a), value)
        colour, marker = STYLE.get(a, ("black", "o"))
        xs = [dodge(x, i, len(names), logx, span) for x in pts]
        draw_errorbar(ax, xs, list(pts.values()), colour, marker, a)
    label_swept(ax, all_x, logx, thousands)
    ax.set_ylabel(label)
    ax.grid(True, alpha=0.3)


def place_labels(ax, items, fontsize=7):
    """Writes each (x, y, text, colour) beside its point, trying eight places around it and taking
    the first whose box overlaps no label already placed and no point (greedy; in display
    coordinates, after the axes are final). A label that fits nowhere goes farther out with a thin
    leader line."""
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    points_px = [ax.transData.transform((x, y)) for x, y, _, _ in items]
    marks = [matplotlib.transforms.Bbox.from_extents(px - 4, py - 4, px + 4, py + 4) for px, py in points_px]
    placed = []
    offsets = [(5, 4), (5, -11), (-5, 4), (-5, -11), (0, 8), (0, -15), (9, -3), (-9, -3)]
    far = [(18, 14), (18, -20), (-18, 14), (-18, -20), (0, 24), (0, -28)]
    axes_box = ax.get_window_extent(renderer)
    for (x, y, text, colour) in items:
        best = None
        for dx, dy in offsets + far:
            ha = "left" if dx > 0 else ("right" if dx < 0 else "center")
            t = ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=fontsize,
                            color=colour, ha=ha, va="bottom")
            box = t.get_window_extent(renderer).expanded(1.05, 1.1)
            overlap = sum(box.overlaps(b) for b in placed + marks)
            inside = axes_box.contains(box.x0, box.y0) and axes_box.contains(box.x1, box.y1)
            score = overlap + (0 if inside else 2)
            t.remove()
            if best is None or score < best[0]:
                best = (score, dx, dy, ha, box)
            if score == 0:
                break
        _, dx, dy, ha, box = best
        leader = dict(arrowstyle="-", color=colour, linewidth=0.5, alpha=0.6) if (dx, dy) in far else None
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(dx, dy), fontsize=fontsize, color=colour,
                    ha=ha, va="bottom", arrowprops=leader)
        placed.append(box)


def title_of(rows, what, stats=CI_TEXT):
    if not rows:
        return what
    seeds = sorted({r["seed"] for r in rows}, key=lambda s: int(s))
    left_out = "; %d disturbed run(s) left out" % DROPPED[0] if DROPPED[0] else ""
    return "%s\nnetwork %s, driver %s, %d seed(s) per point%s\n%s" % (
        what, rows[0]["network"], rows[0]["driver"], len(seeds), left_out, stats)


def figure(ncols=1, width=None, height=3.4):
    """A figure with constrained layout (labels, legends and titles do not overlap)."""
    fig, axes = plt.subplots(1, ncols, figsize=(width or 4.6 * ncols + 0.6, height), constrained_layout=True)
    return fig, axes


def legend_above(ax, ncol=None):
    """The legend of `ax` in one row just above it, outside the data (constrained layout makes
    room for it)."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 1.01), ncol=ncol or len(labels),
                  frameon=False, handletextpad=0.4, columnspacing=1.2)


def finish(fig, path, title):
    """Writes the figure as the PNG `path` and as a PDF beside it."""
    fig.suptitle(title, fontsize=9)
    if not fig.get_constrained_layout():
        fig.tight_layout(rect=(0, 0, 1, 0.90))
    fig.savefig(path, dpi=150, bbox_inches="tight", pad_inches=0.05)
    fig.savefig(os.path.splitext(path)[0] + ".pdf", bbox_inches="tight", pad_inches=0.05)


def is_nan(v):
    return v is None or (isinstance(v, float) and math.isnan(v))
