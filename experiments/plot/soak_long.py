"""The long soak's memory and descriptors (scripts/soak.sh): a panel per approach with every node
process's resident memory (VmRSS) and open descriptors against time, and the growth check.

A node process (one incarnation: a restarted node is a new process) grows without bound when,
after the warm-up (the first 20 % of its life, at least 60 s), the highest value of its last
quarter exceeds the highest of its second quarter by more than 10 % and 4 MiB (memory), or by
more than 8 descriptors. Processes that lived less than 5 minutes are drawn but not judged.

usage: /usr/bin/python3 soak_long.py soak_long.csv soak_long.png soak_long.txt OUT_DIR
Exit 1 when a process grew or a run broke its guarantee (its summary.json), 0 otherwise.
"""
import csv
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(csv_path, png_path, txt_path, out_dir):
    series = defaultdict(list)  # (approach, node, pid) -> [(t, rss_kb, fds)]
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            key = (row["approach"], row["node"], row["pid"])
            series[key].append((int(row["time_s"]), int(row["rss_kb"]), int(row["fds"])))
    approaches = sorted({k[0] for k in series}, key=lambda a: ["upstream", "passive", "active"].index(a)
                        if a in ("upstream", "passive", "active") else 9)
    lines, failed = [], False
    for approach in approaches:
        summary = os.path.join(out_dir, approach, "run", "summary.json")
        try:
            with open(summary) as f:
                s = json.load(f)
            verdict = s["semantics"]["verdict"]
            kinds = defaultdict(int)
            with open(os.path.join(out_dir, approach, "run", "trace.jsonl")) as f:
                for line in f:
                    kinds[json.loads(line)["kind"]] += 1
            lines.append(f"{approach}: verdict {verdict}, lost {s['semantics']['lost']}, duplicates "
                         f"{s['semantics']['duplicates']}; {kinds['failure']} faults, {kinds['takeover']} takeovers, "
                         f"{kinds['pair_restored']} pairs restored; completed {s['completed']}, errors {len(s['errors'])}")
            if verdict != "precise" or not s["completed"]:
                failed = True
        except (OSError, KeyError, ValueError) as e:
            lines.append(f"{approach}: no summary.json ({e})")
            failed = True
        for (a, node, pid), points in sorted(series.items()):
            if a != approach:
                continue
            life = points[-1][0] - points[0][0]
            if life < 300:
                lines.append(f"  {node} pid {pid}: {life} s, not judged (under 5 minutes)")
                continue
            warm = points[0][0] + max(60, life // 5)
            judged = [p for p in points if p[0] >= warm]
            n = len(judged)
            second, last = judged[n // 4: n // 2], judged[3 * n // 4:]
            early_rss, late_rss = max(p[1] for p in second), max(p[1] for p in last)
            early_fds, late_fds = max(p[2] for p in second), max(p[2] for p in last)
            grew_rss = late_rss > early_rss * 1.10 and late_rss - early_rss > 4096
            grew_fds = late_fds - early_fds > 8
            verdict = "GREW" if grew_rss or grew_fds else "flat"
            failed |= grew_rss or grew_fds
            lines.append(f"  {node} pid {pid}: {life} s, RSS {early_rss} -> {late_rss} kB, "
                         f"descriptors {early_fds} -> {late_fds}: {verdict}")
    fig, axes = plt.subplots(len(approaches), 2, figsize=(12, 3.2 * max(1, len(approaches))), squeeze=False)
    for i, approach in enumerate(approaches):
        for (a, node, pid), points in sorted(series.items()):
            if a != approach:
                continue
            t = [p[0] / 60 for p in points]
            axes[i][0].plot(t, [p[1] / 1024 for p in points], lw=0.8, label=f"{node} ({pid})")
            axes[i][1].plot(t, [p[2] for p in points], lw=0.8, label=f"{node} ({pid})")
        axes[i][0].set_title(f"{approach}: resident memory")
        axes[i][0].set_ylabel("MiB")
        axes[i][1].set_title(f"{approach}: open descriptors")
        axes[i][1].set_ylabel("descriptors")
        for ax in axes[i]:
            ax.set_xlabel("minutes")
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
        axes[i][1].legend(fontsize=6, ncol=2, loc="lower right")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    lines.append("result: " + ("something grew or a guarantee broke" if failed else "flat after warm-up, every run precise"))
    with open(txt_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
