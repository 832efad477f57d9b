#!/usr/bin/env bash
# The long soak (issue 16; bounded, not in CI): each approach runs for MINUTES on real processes
# (the default network), with a fault every 30 s — a SIGKILL of the aggregate's current primary
# restarted 10 s later (it rejoins as the standby, so the next kill hits the other node of the
# pair), and a 300 ms SIGSTOP of the filter in between — while every node process's resident
# memory (VmRSS) and open descriptors are sampled each second. It fails when either grows
# without bound after the warm-up (bounded queues must show), or when a run breaks its
# approach's guarantee.
#
#   scripts/soak.sh [--minutes 30] [--approaches upstream,passive,active] [--out out/soak-long]
#
# Writes OUT/soak_long.csv (time_s,approach,node,pid,rss_kb,fds: a line per node per second),
# OUT/soak_long.png (both against time, a panel per approach), OUT/soak_long.txt (the verdicts
# and the growth per node) and each approach's run folder OUT/APPROACH/run (hapair run --out).
# Exit 0 when every run kept its guarantee and nothing grew, 1 otherwise, 2 for bad options.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=30
approaches=upstream,passive,active
out=out/soak-long
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2;;
    --approaches) approaches="$2"; shift 2;;
    --out) out="$2"; shift 2;;
    -h|--help) sed -n '2,20p' "$0"; exit 0;;
    *) echo "soak.sh: unknown option '$1' (--minutes, --approaches, --out)" >&2; exit 2;;
  esac
done
case "$minutes" in ''|*[!0-9]*) echo "soak.sh: --minutes must be a whole number, not '$minutes'" >&2; exit 2;; esac
if [ "$minutes" -lt 2 ]; then echo "soak.sh: --minutes must be at least 2" >&2; exit 2; fi
hapair="$(pwd)/build/src/cli/hapair"
[ -x "$hapair" ] || { echo "soak.sh: build first (scripts/build.sh): no $hapair" >&2; exit 2; }
mkdir -p "$out"
out="$(realpath "$out")"
csv="$out/soak_long.csv"
echo "time_s,approach,node,pid,rss_kb,fds" >"$csv"
seconds=$((minutes * 60))
status=0
IFS=, read -r -a list <<<"$approaches"
for approach in "${list[@]}"; do
  case "$approach" in upstream) standby=aggregate.spare;; passive|active) standby=aggregate.backup;;
    *) echo "soak.sh: approach '$approach' has no standby to rejoin (upstream, passive, active)" >&2; exit 2;; esac
  faults=()
  victim=aggregate
  for ((t = 30, k = 0; t + 15 < seconds; t += 30, k++)); do
    if ((k % 2 == 0)); then
      faults+=(--fail "$victim@$t" --restart "$victim@$((t + 10))")
      if [ "$victim" = aggregate ]; then victim=$standby; else victim=aggregate; fi
    else
      faults+=(--pause "filter@$t+0.3")
    fi
  done
  folder="$out/$approach"
  rm -rf "$folder"
  mkdir -p "$folder/tmp"
  echo "soak.sh: $approach for $minutes min with ${#faults[@]} fault options ($(date +%T))"
  TMPDIR="$folder/tmp" "$hapair" run --ha "$approach" --duration-s "$seconds" "${faults[@]}" \
    --out "$folder/run" >"$folder/run.log" 2>&1 &
  run=$!
  start=$(date +%s)
  while kill -0 "$run" 2>/dev/null; do
    now=$(($(date +%s) - start))
    for pid in $(pgrep -f -- "node --topology $folder/tmp/" || true); do
      # A process may end between pgrep and these reads: then it is skipped this second.
      name=$({ tr '\0' '\n' <"/proc/$pid/cmdline"; } 2>/dev/null | sed -n '/^--name$/{n;p;}') || continue
      rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null) || continue
      fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l) || continue
      [ -n "$name" ] && [ -n "$rss" ] && echo "$now,$approach,$name,$pid,$rss,$fds" >>"$csv"
    done
    sleep 1
  done
  if wait "$run"; then
    echo "soak.sh: $approach: $(tail -1 "$folder/run.log")"
  else
    echo "soak.sh: $approach: the run failed (exit $?): $(tail -1 "$folder/run.log")" >&2
    status=1
  fi
done
if ! /usr/bin/python3 experiments/plot/soak_long.py "$csv" "$out/soak_long.png" "$out/soak_long.txt" "$out"; then status=1; fi
cat "$out/soak_long.txt"
exit "$status"
