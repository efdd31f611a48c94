#!/usr/bin/env bash
# Issue 22's heuristic planners at scale, two builds side by side in one run:
# `tessera plan` whole-process times of migserving-greedy on 300 and 1,000
# generated services, parva on 11,000, `tessera compare --repeat 1
# --time-limit 2` on 10,000 (without a limit migserving-greedy alone takes
# minutes there: it scores every pair of services once), and each heuristic
# MIG planner under --time-limit 1 on 3,000 and 10,000, with the planner's
# own plan_ms (compare: the largest of its planners'). Runs alternate between the builds; each
# figure is the median of N runs (default 3), wall and CPU (user + sys)
# seconds, and new / old. Workloads: tessera gen --services N --rates
# normal:300,100 (seed 1). Usage: scripts/bench_heuristics.sh OLD_TESSERA
# NEW_TESSERA [N]; a run is cut after $TIMEOUT seconds (default 600), and its
# wall time then shows the cut.
set -euo pipefail
old=$1 new=$2 n=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for s in 300 1000 3000 10000 11000; do
  "$new" gen --services $s --rates normal:300,100 -o "$work/gen$s.yaml"
done

# run BIN ARGS...: prints "wall cpu plan_ms" of one run (plan_ms from the
# JSON on stdout, "-" when there is none).
run() {
  local bin=$1; shift
  local t0 t1 out
  t0=$(date +%s%N)
  out=$( { /usr/bin/time -f '%U %S' timeout "${TIMEOUT:-600}" "$bin" "$@" --format json 2>"$work/err" >"$work/out" || true; } 2>&1)
  t1=$(date +%s%N)
  local cpu plan_ms
  cpu=$(tail -1 "$work/err" | awk '{ printf "%.3f", $1 + $2 }')
  plan_ms=$(python3 -c "import json,sys
try:
  d = json.load(open('$work/out'))
  print(d['metrics']['plan_ms'] if isinstance(d, dict) else max(r['plan_ms'] for r in d))
except Exception:
  print('-')")
  awk -v a="$t0" -v b="$t1" -v c="$cpu" -v p="$plan_ms" 'BEGIN { printf "%.3f %s %s\n", (b - a) / 1e9, c, p }'
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# compare_row LABEL ARGS...: N alternating runs of both builds.
compare_row() {
  local label=$1; shift
  : >"$work/old" ; : >"$work/new"
  for _ in $(seq "$n"); do
    run "$old" "$@" >>"$work/old"
    run "$new" "$@" >>"$work/new"
  done
  local ow oc op nw nc np
  ow=$(cut -d' ' -f1 "$work/old" | median); oc=$(cut -d' ' -f2 "$work/old" | median)
  op=$(cut -d' ' -f3 "$work/old" | median); nw=$(cut -d' ' -f1 "$work/new" | median)
  nc=$(cut -d' ' -f2 "$work/new" | median); np=$(cut -d' ' -f3 "$work/new" | median)
  printf '%-44s %9s %9s %10s | %9s %9s %10s | %7s\n' "$label" "$ow" "$oc" "$op" "$nw" "$nc" "$np" \
    "$(awk -v a="$oc" -v b="$nc" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "-" }')"
}

printf '%-44s %9s %9s %10s | %9s %9s %10s | %7s\n' "" old_wall old_cpu old_plan_ms new_wall new_cpu \
  new_plan_ms cpu_new/old
compare_row "plan migserving-greedy, 300 services" plan --scenario "$work/gen300.yaml" --planner migserving-greedy
compare_row "plan migserving-greedy, 1,000 services" plan --scenario "$work/gen1000.yaml" --planner migserving-greedy
compare_row "plan parva, 11,000 services" plan --scenario "$work/gen11000.yaml" --planner parva
compare_row "compare --repeat 1 --time-limit 2, 10,000" compare --scenario "$work/gen10000.yaml" \
  --repeat 1 --time-limit 2
for s in 3000 10000; do
  for p in parva parva-single parva-unopt static-7 static-7x1 static-mix migserving-greedy \
    migserving-greedy-mps2 migserving-greedy-mps4 migserving-ga; do
    compare_row "plan $p --time-limit 1, $s services" plan --scenario "$work/gen$s.yaml" \
      --planner $p --time-limit 1
  done
done
