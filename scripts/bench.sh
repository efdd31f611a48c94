#!/usr/bin/env bash
# `make bench`: first the whole-process start-up figures (`tessera --version`
# and `tessera plan` on S6 and ParvaGPU rows 1-6, beside another build's when
# TESSERA_BASE_BIN names its tessera; N_START runs, default 21), then the
# embedded profiles' synthesis, the scenario YAML parse and the planner hot
# paths with Google Benchmark (medians of 5 repetitions; the exact planner's
# with its GPUs, proven bound and gap), `tessera compare` on 10,000 generated
# services (whole process, beside TESSERA_BASE_BIN's), the serving simulator (and its peak
# memory on 10 min and 1 h of S6), online replays and the transition planner,
# the capacity rules side by side, and the whole-process times of `tessera
# replay --compare` (medians of 21 runs, output to /dev/null); after the
# exact planner's figures, the Python package's: tessera.plan on S6 against
# the C++ call it wraps (python/bench/bench_plan.py, run by $PYTHON_BENCH, a
# python with the package installed; default BUILD_DIR/pyenv/bin/python,
# where `make test` installs it). Usage: scripts/bench.sh BUILD_DIR
# [start|python]: `start` prints the start-up figures only, `python` the
# Python package's only.
set -euo pipefail
build=${1:-build}
cd "$(dirname "$0")/.."

# Medians of `tessera_bench` rows matching $1, as "name plan_ms" and, for
# benchmarks with counters, "gpus bound gap". Google Benchmark's CSV header
# lists the counters of the first benchmark only, so each call selects
# benchmarks with the same counters.
bench_medians() {
  "$build/tessera_bench" --benchmark_filter="$1" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_format=csv 2>/dev/null |
    awk -F, '
      /^name,/ { for (i = 1; i <= NF; ++i) { h = $i; gsub(/"/, "", h); col[h] = i }; next }
      $9 == "true" { name = $1; gsub(/"/, "", name); msg = $10; gsub(/"/, "", msg); printf "%-40s skipped: %s\n", name, msg; next }
      /_median"?,/ {
        name = $1; gsub(/"/, "", name); sub(/_median$/, "", name)
        scale = ($5 ~ /us/) ? 1e-3 : ($5 ~ /ns/) ? 1e-6 : ($5 ~ /ms/) ? 1 : 1e3
        line = sprintf("%-40s %12.4f", name, $3 * scale)
        if ("gpus" in col)
          line = line sprintf(" %6d %8.2f %7.2f%%", $col["gpus"], $col["bound"], 100 * $col["gap"])
        print line }'
}

# Medians of the benchmarks matching $1 with their wall time (the unit the
# benchmark reports, printed with format $2) and counters: pairs of a
# counter name and its printf format. Prints a header line first.
wall_and_counters() {
  local filter=$1 wall_format=$2; shift 2
  local names=() formats=()
  while [ $# -gt 0 ]; do names+=("$1"); formats+=("$2"); shift 2; done
  printf '%-40s %12s' benchmark wall_ms
  printf ' %10s' "${names[@]}"
  printf '\n'
  "$build/tessera_bench" --benchmark_filter="$filter" --benchmark_repetitions=5 \
    --benchmark_display_aggregates_only=true --benchmark_format=csv 2>/dev/null |
    awk -F, -v wall="$wall_format" -v names="${names[*]}" -v formats="${formats[*]}" '
      BEGIN { n = split(names, name, " "); split(formats, format, " ") }
      /^name,/ { for (i = 1; i <= NF; ++i) { h = $i; gsub(/"/, "", h); col[h] = i }; next }
      $9 == "true" { b = $1; gsub(/"/, "", b); msg = $10; gsub(/"/, "", msg); printf "%-40s skipped: %s\n", b, msg; next }
      /_median"?,/ {
        b = $1; gsub(/"/, "", b); sub(/_median$/, "", b)
        line = sprintf("%-40s " wall, b, $3)
        for (i = 1; i <= n; ++i) line = line sprintf(" " format[i], $col[name[i]])
        print line }'
}

# Wall ms of one run of "$@", output discarded (bash's clock: no process is
# started to read the time).
wall_ms() {
  local t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || true
  local t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) * 1000}'
}
median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
run_median() {  # prints the median wall time in ms of N runs of "$@"
  local n=$1; shift
  for _ in $(seq "$n"); do wall_ms "$@"; done | median
}

# Issue 24's figure: tessera.plan(S6, exact) through Python against
# RunPlanRequest timed in C++, interleaved in one process; skipped with the
# reason when $PYTHON_BENCH cannot import the package.
python_bench() {
  local py=${PYTHON_BENCH:-$build/pyenv/bin/python}
  echo "== Python package: tessera.plan on S6, exact (issue 24 asks python / C++ < 1.2) then parva,"
  echo "   against the C++ call it wraps (RunPlanRequest timed in C++), interleaved, ms per call"
  if ! "$py" -c 'import tessera' >/dev/null 2>&1; then
    echo "skipped: $py cannot import tessera (make test installs it in $build/pyenv; or PYTHON_BENCH=<python>)"
    return 0
  fi
  "$py" python/bench/bench_plan.py --planner exact
  "$py" python/bench/bench_plan.py --planner parva
}
if [ "${2:-}" = python ]; then
  python_bench
  exit 0
fi

# Scratch files of start_row: the shell's `times` before and after a run.
times_dir=$(mktemp -d)
trap 'rm -rf "$times_dir"' EXIT
# The children's user + system CPU ms in a `times` listing (1 ms resolution).
children_cpu_ms() {
  awk 'NR == 2 { t = 0; for (i = 1; i <= 2; ++i) { split($i, p, /[ms]/); t += p[1] * 60 + p[2] }
                 printf "%.0f\n", t * 1000 }' "$1"
}

# start_row LABEL ARGS...: N_START runs of `tessera ARGS` and, when
# TESSERA_BASE_BIN names another build of tessera, of the same command with
# it, run by run in turn (which goes first alternates): the median wall ms
# of each, the mean CPU ms (user + system) of each, and the ratios this
# build / base. CPU time stays meaningful on a busy machine, where the wall
# time also holds the waits for a core.
N_START=${N_START:-21}
start_row() {
  local label=$1; shift
  local ours=() base=() ours_cpu=0 base_cpu=0 i which
  for i in $(seq "$N_START"); do
    for which in first second; do
      local bin=$build/tessera
      if [ -n "${TESSERA_BASE_BIN:-}" ]; then
        if { [ $which = first ] && [ $((i % 2)) -eq 0 ]; } ||
           { [ $which = second ] && [ $((i % 2)) -eq 1 ]; }; then
          bin=$TESSERA_BASE_BIN
        fi
      elif [ $which = second ]; then
        continue
      fi
      # In this shell, not in $(wall_ms ...): the CPU of a subshell and of
      # its awk would count as the run's.
      times >"$times_dir/before"
      local t0=$EPOCHREALTIME
      "$bin" "$@" >/dev/null 2>&1 || true
      local t1=$EPOCHREALTIME
      times >"$times_dir/after"
      local ms; ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) * 1000}')
      local cpu=$(( $(children_cpu_ms "$times_dir/after") - $(children_cpu_ms "$times_dir/before") ))
      if [ "$bin" = "$build/tessera" ]; then
        ours+=("$ms"); ours_cpu=$((ours_cpu + cpu))
      else
        base+=("$ms"); base_cpu=$((base_cpu + cpu))
      fi
    done
  done
  local m c; m=$(printf '%s\n' "${ours[@]}" | median)
  c=$(awk -v t="$ours_cpu" -v n="$N_START" 'BEGIN {printf "%.2f", t / n}')
  if [ -n "${TESSERA_BASE_BIN:-}" ]; then
    local b bc; b=$(printf '%s\n' "${base[@]}" | median)
    bc=$(awk -v t="$base_cpu" -v n="$N_START" 'BEGIN {printf "%.2f", t / n}')
    printf '%-26s %8s %8s %6s %8s %8s %6s\n' "$label" "$m" "$b" \
      "$(awk -v m="$m" -v b="$b" 'BEGIN {printf "%.2f", m / b}')" "$c" "$bc" \
      "$(awk -v m="$c" -v b="$bc" 'BEGIN {printf "%.2f", (b > 0 ? m / b : 0)}')"
  else
    printf '%-26s %8s %8s\n' "$label" "$m" "$c"
  fi
}

echo "== whole process: tessera --version, plan on S6 and on ParvaGPU rows 1-6 (compat: --compat"
echo "   parva-artifact; default: each build's default rule; queueing: --capacity-rule queueing),"
echo "   parva and exact (the default): $N_START runs, median wall ms and mean CPU ms; with"
echo "   TESSERA_BASE_BIN=<another build's tessera>, that build beside it, run by run in turn"
if [ -n "${TESSERA_BASE_BIN:-}" ]; then
  printf '%-26s %8s %8s %6s %8s %8s %6s\n' command wall_ms base_ms ratio cpu_ms base_cpu ratio
else
  printf '%-26s %8s %8s\n' command wall_ms cpu_ms
fi
start_row "--version" --version
for planner in parva exact; do
  start_row "S6 (embedded), $planner" plan --scenario examples/scenarios/s6.yaml \
    --planner $planner --format json
done
# ParvaGPU's rows as the artifact reads them (--compat parva-artifact: bare
# capacity), as issue 22 words the command (each build's default rule; for
# this build the pooled one, for 862fa83 per-process queueing), and with the
# rule both builds take (--capacity-rule queueing).
if [ -d ../shared/data/parvagpu/prof_data ]; then
  for rule in compat default queueing; do
    case $rule in
      compat) rule_args=(--compat parva-artifact --format json) ;;
      default) rule_args=(-o /dev/null) ;;
      queueing) rule_args=(--capacity-rule queueing -o /dev/null) ;;
    esac
    for planner in parva exact; do
      for row in 1 2 3 4 5 6; do
        start_row "row $row, $planner, $rule" plan --profiles ../shared/data/parvagpu/prof_data \
          --parva-slo ../shared/data/parvagpu/SLO --row $row --planner $planner "${rule_args[@]}"
      done
    done
  done
fi
# `scripts/bench.sh BUILD_DIR start`: this section only.
if [ "${2:-}" = start ]; then exit 0; fi
echo

echo "== embedded profiles: DefaultProfiles(a100-80gb), wall ms per call (median of 5)"
wall_and_counters '^BM_DefaultProfiles' '%12.3f' entries '%10.0f'
echo
echo "== scenario YAML: ParseScenarioYaml on generated scenarios, wall ms per parse (median of 5)"
wall_and_counters '^BM_ParseScenarioYaml' '%12.1f' MB '%10.2f' services '%10.0f'
echo
echo "== plan_ms: planner wall time, inputs already loaded (median of 5 repetitions)"
printf '%-40s %12s\n' benchmark plan_ms
bench_medians '^BM_Parva'
echo
echo "== exact planner: plan_ms, GPUs, proven lower bound, gap = GPUs / bound - 1"
echo "   (ParvaGPU rows 1-6, S5 x 10, and 1,000 generated services with an 8 s limit)"
printf '%-40s %12s %6s %8s %8s\n' benchmark plan_ms gpus bound gap
bench_medians '^BM_Exact(Artifact|Generated)'
echo
python_bench
echo
echo "== exact planner against its time limit: \`tessera gen --services N --rates normal:1500,400\`,"
echo "   3,000 services with 2 s and 10,000 with 5 s (median of 5): overrun = wall / limit - 1"
wall_and_counters '^BM_ExactTimeLimit' '%12.0f' limit_ms '%10.0f' overrun '%10.3f' gpus '%10.0f' \
  bound '%10.0f' gap '%10.4f'

echo
echo "== MIG-serving's fast algorithm on the generated workloads (tessera gen --preset 0..3 ="
echo "   normal-1, normal-2, lognormal-1, lognormal-2): plan_ms, GPUs, strongest bound, gap"
printf '%-40s %12s %6s %8s %8s\n' benchmark plan_ms gpus bound gap
bench_medians '^BM_MigServingGreedy'
echo
echo "== migserving-ga against its time limit (normal-1, rounds never stall out; median of 5):"
echo "   overrun = wall / limit - 1"
wall_and_counters '^BM_MigServingGa' '%12.1f' limit_ms '%10.0f' overrun '%10.4f'

echo
echo "== heuristic planners at scale (tessera gen --services N --rates normal:300,100): plan_ms and"
echo "   GPUs of migserving-greedy on 300 and 1,000 services and parva on 11,000 (median of 5);"
echo "   scripts/bench_heuristics.sh sets them beside another build"
wall_and_counters '^BM_HeuristicPlan' '%12.1f' gpus '%10.0f'
echo
echo "== fleet scale: tessera gen --preset normal-1 --services 10000 (about 90,000 GPUs) by the"
echo "   default planner, as tessera plan runs it (median of 5); peak memory: docs/performance.md"
wall_and_counters '^BM_FleetPlan' '%12.1f' gpus '%10.0f'
echo
echo "== time limits: each heuristic MIG planner under a 1 s limit on 3,000 and 10,000 of those"
echo "   services; overrun = wall / limit - 1 (negative: done first), planned = 1 for a plan, 0 for"
echo "   the error that says to raise --time-limit (median of 5)"
wall_and_counters '^BM_HeuristicTimeLimit' '%12.1f' limit_ms '%10.0f' overrun '%10.4f' planned '%10.0f'

echo
echo "== tessera compare on 10,000 generated services (tessera gen --services 10000 --rates"
echo "   normal:300,100): whole process, one run each, wall s, CPU s (user + system), peak MiB;"
echo "   plan parva alone shows the problem's build (parva plans in ~0.1 s). With TESSERA_BASE_BIN,"
echo "   that build's figures follow on each row, its runs cut at \$COMPARE_CUT s (default 120)"
cmp_work=$(mktemp -d)
"$build/tessera" gen --services 10000 --rates normal:300,100 -o "$cmp_work/gen10000.yaml"
# cmp_run BIN ARGS...: "wall cpu MiB" of one run, wall prefixed ">" when cut.
cmp_run() {
  local bin=$1; shift
  local rc=0
  /usr/bin/time -f '%e %U %S %M' -o "$cmp_work/time" timeout "${COMPARE_CUT:-120}" "$bin" "$@" \
    >/dev/null 2>&1 || rc=$?
  awk -v cut=$([ $rc -eq 124 ] && echo ">" || echo "") 'END { printf "%s%.1f %.1f %.0f", cut, $1, $2 + $3, $4 / 1024 }' \
    "$cmp_work/time"
}
printf '%-36s %18s %18s\n' command "wall cpu MiB" "base: wall cpu MiB"
for args in "plan --planner parva" "compare --repeat 1" "compare"; do
  ours=$(cmp_run "$build/tessera" $args --scenario "$cmp_work/gen10000.yaml")
  base=-
  if [ -n "${TESSERA_BASE_BIN:-}" ]; then
    base=$(cmp_run "$TESSERA_BASE_BIN" $args --scenario "$cmp_work/gen10000.yaml")
  fi
  printf '%-36s %18s %18s\n' "$args" "$ours" "$base"
done
rm -rf "$cmp_work"

echo
echo "== MPS planners: iGniter's placement of 10 to 1,000 random workloads on V100s (the paper"
echo "   reports 4.61 s for 1,000), FFD+ and GSLICE+ on 1,000: plan_ms, GPUs, Theorem 1 bound"
wall_and_counters '^BM_(Igniter|FfdPlus|GslicePlus)Place' '%12.3f' gpus '%10.0f' bound '%10.0f'

echo
echo "== serving simulator: wall ms per run, simulated requests per wall second (median of 5)"
wall_and_counters '^BM_Simulate' '%12.1f' Mreq_per_s '%12.2f'

echo
echo "== the rehearsal's data path (docs/rehearse.md): one tessera emulate (batches of up to 64,"
echo "   0.05 ms each) under the open-loop generator at 1,000 and 4,000 requests/s for 2 s,"
echo "   directly (/0) and through HAProxy 2.6 leastconn (/1), in one process: answered per"
echo "   second, CPU us per request (generator + emulator), wall p50/p99 ms, send jitter p99"
wall_and_counters '^BM_ServingPath' '%12.0f' served_per_s '%12.0f' cpu_us_per_req '%10.1f' \
    p50_ms '%8.3f' p99_ms '%8.3f' jitter_p99_ms '%8.3f'

echo
echo "== serving simulator's memory: tessera simulate of S6 under the parva plan (39,342 requests/s),"
echo "   peak RSS by /usr/bin/time; no request is kept, so it does not grow with the duration"
printf '%-10s %12s %12s %10s\n' duration requests peak_MiB wall_s
sim_work=$(mktemp -d)
"$build/tessera" plan --scenario examples/scenarios/s6.yaml --planner parva --format json \
  -o "$sim_work/s6.json" >/dev/null
for duration in 10m 1h; do
  /usr/bin/time -f '%M %e' -o "$sim_work/time" "$build/tessera" simulate \
    --scenario examples/scenarios/s6.yaml --deployment "$sim_work/s6.json" --duration $duration \
    --format json -o "$sim_work/report.json"
  read -r kb wall <"$sim_work/time"
  requests=$(sed -n 's/^  "requests": \([0-9]*\),$/\1/p' "$sim_work/report.json")
  printf '%-10s %12s %12.1f %10.1f\n' $duration "$requests" "$(awk -v kb="$kb" 'BEGIN { print kb / 1024 }')" "$wall"
done
rm -rf "$sim_work"

echo
echo "== online placement: replay of the Alibaba GPU trace 2023 (8,063 VMs), wall ms per replay"
echo "   (median of 5), accepted share, the lowest acceptance of any profile (worst),"
echo "   active-hardware AUC in percent-hours;"
echo "   Recorded = 6,212 GPUs as in the trace, Stressed = --gpus-per-host 1 --lifetime none"
wall_and_counters '^BM_Replay' '%12.2f' acceptance '%10.4f' worst_profile '%10.4f' hw_auc '%10.0f'

echo
echo "== transition planner: PlanTransition between the parva plans of one generated workload at day"
echo "   and night rates (320 services: ~100 GPUs, 3,200: ~1,000), 2 spare GPUs, wall ms (median of 5);"
echo "   the plan's steps, phases, GPUs touched, peak GPUs and lowest capacity / floor, then the naive"
echo "   order's (destroy all that differs, then create) on the same mapping; spare_needed > 0 when 2"
echo "   spares are not enough (the figures are then those of a plan with that many)"
wall_and_counters '^BM_PlanTransition' '%12.2f' gpus_a '%10.0f' gpus_b '%10.0f' steps '%10.0f' \
  phases '%10.0f' touched '%10.0f' peak '%10.0f' min_ratio '%10.3f' naive_steps '%10.0f' \
  naive_phases '%10.0f' naive_ratio '%10.3f' spare_needed '%10.0f'

echo
echo "== Kubernetes scheduler extender: one pod's filter + prioritize over 5,000 nodes x 8 A100-80GB"
echo "   by name (nodeCacheCapable), JSON text in and out as tessera serve handles them, half the"
echo "   GPUs holding a 3g.40gb and a 1g.10gb; 400 pods per policy, each timed (median of 5 runs)"
wall_and_counters '^BM_ExtenderFilterPrioritize' '%12.2f' p50_ms '%10.2f' p99_ms '%10.2f'
echo "   its request body alone (5,000 names), read by the one-pass reader (/0) and through a whole"
echo "   JSON tree (/1), side by side"
wall_and_counters '^BM_ExtenderArgsRead' '%12.3f' body_kb '%10.1f'

echo
echo "== DRA driver: one POST /v1/dra/offers as tessera serve answers it (parse, replay the log"
echo "   through the policy, ask one more claim of each of six profiles, serialise) on 200 nodes x 8"
echo "   A100-80GB, by log length (/events/policy: 0 grmu, 1 bf), wall ms (median of 5)"
wall_and_counters '^BM_DraOffers' '%12.2f' body_kb '%10.1f' offers '%10.0f'

# "GPUS LOWEST%": the default planner's plan of `tessera plan "$@"` and the
# lowest share of any service's requests within its SLO in 60 s of --verify.
gpus_and_compliance() {
  local work; work=$(mktemp -d)
  "$build/tessera" plan "$@" --verify --format json -o "$work/plan.json" 2>"$work/verify.txt" || true
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['metrics']['gpus'], end=' ')" \
    "$work/plan.json" 2>/dev/null || printf -- '- '
  awk '/in SLO %/ { f = 1; next } f && NF == 7 { print $7 } f && NF < 7 { exit }' "$work/verify.txt" |
    sort -n | head -1 | awk '{ printf "%s%%\n", $1 }'
  rm -rf "$work"
}

# Capacity rules side by side: before = the per-process queueing rule behind
# the weighted router; after = the pooled rule behind jsq (the default).
before=(--capacity-rule queueing --router weighted)
P=../shared/data/parvagpu
if [ -d "$P/prof_data" ]; then
  echo
  echo "== capacity rules on ParvaGPU's A100 data, default planner: GPUs and the lowest compliance of"
  echo "   any service in 60 s of --verify (Poisson, the plan's own rule and router), per-process"
  echo "   queueing + weighted (before) and pooled + jsq (the default); ParvaGPU's artifact: 2 3 5 7 13 16"
  printf '%-14s %18s %18s\n' scenario before after
  for row in 1 2 3 4 5 6; do
    args=(--profiles "$P/prof_data" --parva-slo "$P/SLO" --row "$row")
    printf '%-14s %18s %18s\n' "row $row" "$(gpus_and_compliance "${args[@]}" "${before[@]}")" \
      "$(gpus_and_compliance "${args[@]}")"
  done
  args=(--profiles "$P/prof_data" --parva-slo "$P/SLO" --row 5 --replicate 10)
  printf '%-14s %18s %18s\n' "S5 x 10" "$(gpus_and_compliance "${args[@]}" "${before[@]}")" \
    "$(gpus_and_compliance "${args[@]}")"
fi
echo
echo "== capacity rules on 30 generated scenarios (tessera gen --services 10 --rates lognormal:6.5,1"
echo "   --slo-ms 100..200 --seed 1..30, embedded profiles), default planner: total GPUs and the lowest"
echo "   compliance of any service in any scenario (60 s of --verify), before and after"
work=$(mktemp -d)
totals=$(for seed in $(seq 30); do
  "$build/tessera" gen --services 10 --rates lognormal:6.5,1 --slo-ms $((100 + 25 * (seed % 5))) \
    --seed "$seed" -o "$work/s.yaml"
  echo "$(gpus_and_compliance --scenario "$work/s.yaml" "${before[@]}") $(gpus_and_compliance --scenario "$work/s.yaml")"
done | tr -d '%' | awk '{ b += $1; a += $3; if (NR == 1 || $2 < mb) mb = $2; if (NR == 1 || $4 < ma) ma = $4 }
  END { printf "before: %d GPUs, lowest %.2f%%;  after: %d GPUs, lowest %.2f%%;  ratio %.3f\n", b, mb, a, ma, a / b }')
echo "$totals"
rm -rf "$work"

D=../shared/data/alibaba-gpu-2023/csv
if [ -d "$D" ]; then
  echo
  echo "== whole process: tessera replay --compare on the Alibaba trace (median of 21 runs, ms)"
  echo "as recorded:              $(run_median 21 "$build/tessera" replay --nodes $D/openb_node_list_gpu_node.csv \
    --pods $D/openb_pod_list_default.csv --compare --format json)"
  echo "stressed:                 $(run_median 21 "$build/tessera" replay --nodes $D/openb_node_list_gpu_node.csv \
    --pods $D/openb_pod_list_default.csv --compare --format json --gpus-per-host 1 --lifetime none)"
fi

if [ -f "$build/libtessera-fake-nvml.so" ] && [ -x "$build/tessera-standin" ]; then
  echo
  echo "== whole process: tessera agent on the fake NVML, stand-in MPS daemons and servers (median of 5"
  echo "   runs, ms): S3's node plan applied to an empty 8-GPU node, run again (nothing to do), and the"
  echo "   day-to-night transition from S3's plan to S3-night's"
  work=$(mktemp -d)
  s=$PWD/$build/tessera-standin
  "$build/tessera" plan --scenario examples/scenarios/s3.yaml --format json -o "$work/day.json"
  "$build/tessera" plan --scenario examples/scenarios/s3-night.yaml --format json -o "$work/night.json"
  "$build/tessera" transition --scenario examples/scenarios/s3-night.yaml --from "$work/day.json" \
    --to "$work/night.json" --spare-gpus 1 --format json -o "$work/t.json" 2>/dev/null
  "$build/tessera" deploy --deployment "$work/day.json" --out "$work/day" --base-port 21000 \
    --mps-root "$work/mps" >/dev/null
  "$build/tessera" deploy --deployment "$work/night.json" --transition "$work/t.json" \
    --out "$work/night" --base-port 21000 --mps-root "$work/mps" >/dev/null
  agent() {  # agent PLAN [flags...] on the machine of $work
    local plan=$1; shift
    TESSERA_FAKE_NVML_STATE="$work/nvml.json" TESSERA_FAKE_NVML_DEVICES='a100-80gb*8' \
      "$build/tessera" agent --node node-0 --plan "$plan" --state-dir "$work/state" \
      --nvml "$build/libtessera-fake-nvml.so" --mps-command "$s mps -d" \
      --mps-control-command "$s mps-control" --serve-command "$s serve --http-port={http_port}" \
      --drain-timeout 5s --quiet "$@"
  }
  fresh() {  # an empty machine: no instance, no process of the agent's
    for pid in $(grep -l "TESSERA_AGENT_STATE_DIR=$work/state" /proc/[0-9]*/environ 2>/dev/null |
      cut -d/ -f3); do kill -KILL "$pid" 2>/dev/null || true; done
    rm -rf "$work/state" "$work/nvml.json" "$work/nvml.json.lock"
  }
  apply_fresh() { fresh; agent "$work/day/nodes/node-0.json" --once; }
  transition_fresh() {
    fresh; agent "$work/day/nodes/node-0.json" --once >/dev/null 2>&1
    wall_ms agent "$work/night/nodes/node-0.json" --transition "$work/t.json" >>"$work/transition_ms"
  }
  echo "apply S3 (empty node):      $(run_median 5 apply_fresh)"
  echo "again (converged):          $(run_median 5 agent "$work/day/nodes/node-0.json" --once)"
  for _ in 1 2 3 4 5; do transition_fresh; done
  echo "transition day -> night:    $(median <"$work/transition_ms")"
  fresh
  rm -rf "$work"
fi

if [ -x "$build/tessera-api-load" ]; then
  echo
  echo "== tessera serve on loopback with S3 x 200 deployed (2,200 services; GPUs below): the API under"
  echo "   load from tessera-api-load (4 keep-alive connections, 5 s each, every request timed; GET as"
  echo "   identity, as gzip (received, not decoded) and as 304 to If-None-Match), and a"
  echo "   rate change re-planned, its transition planned, checked and stored, timed as the PATCH's"
  echo "   reply (median of 5, alternately doubling and restoring resnet50's rate)"
  work=$(mktemp -d)
  "$build/tessera" serve --listen 127.0.0.1:0 --db "$work/state.db" \
    --scenario examples/scenarios/s3.yaml --replicate 200 >"$work/serve.out" 2>"$work/serve.err" &
  serve_pid=$!
  url=
  for _ in $(seq 600); do
    url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$work/serve.out")
    [ -n "$url" ] && break
    sleep 0.1
  done
  json() { python3 -c "import json, sys; print(json.load(sys.stdin)$1)"; }
  api() {  # api METHOD PATH [BODY]: the reply's body; fails on a non-2xx reply
    curl -sf -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$url$2"
  }
  plan=$(api POST /v1/plans '{}' | json '["id"]')
  transition=$(api POST /v1/transitions "{\"to\": $plan, \"start\": true}" | json '["id"]')
  "$build/tessera-api-load" --url "$url" drive --transition "$transition" >/dev/null
  echo "deployed:                   $(api GET /v1/deployment | json '["metrics"]["gpus"]') GPUs," \
    "$(api GET /v1/deployment | wc -c) bytes of GET /v1/deployment"
  etag=$(curl -sf -o /dev/null -D - "$url/v1/deployment" | sed -n 's/^ETag: *\([^\r]*\)\r*$/\1/Ip')
  get_load() {  # get_load [FLAG]...: one load line for GET /v1/deployment
    "$build/tessera-api-load" --url "$url" load --method GET --path /v1/deployment \
      --connections 4 --seconds 5 "$@"
  }
  echo "GET /v1/deployment, plain:  $(get_load)"
  echo "  gzip (sent, not decoded): $(get_load --gzip)   ($(curl -sf -H 'Accept-Encoding: gzip' \
    "$url/v1/deployment" | wc -c) bytes)"
  echo "  304 (If-None-Match):      $(get_load --if-none-match "$etag")"
  echo "PATCH /v1/services/{name}:  $("$build/tessera-api-load" --url "$url" load \
    --method PATCH --path /v1/services/bert --connections 4 --seconds 5 \
    --body '{"rate_rps": 46.5, "replan": false}' --body '{"rate_rps": 46, "replan": false}')"
  : >"$work/replan_ms"
  for rate in 2926 1463 2926 1463 2926; do
    reply=$(curl -sf -o "$work/replan.json" -w '%{time_total}' -X PATCH \
      -H 'Content-Type: application/json' -d "{\"rate_rps\": $rate}" "$url/v1/services/resnet50")
    awk -v s="$reply" 'BEGIN {printf "%.1f\n", s * 1000}' >>"$work/replan_ms"
    moved=$(json '["replan"]["transition"]["id"]' <"$work/replan.json")
    "$build/tessera-api-load" --url "$url" drive --transition "$moved" >/dev/null
  done
  echo "re-plan + transition:       $(sort -n "$work/replan_ms" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') ms" \
    "(last: $(json '["replan"]["transition"]["summary"]["steps"]' <"$work/replan.json") steps in" \
    "$(json '["replan"]["transition"]["summary"]["phases"]' <"$work/replan.json") phases)"
  kill "$serve_pid"
  wait "$serve_pid" 2>/dev/null || true
  rm -rf "$work"
fi

# Issue 37's figures: PATCH /v1/services/{name} with each store (one SQLite
# file; a three-member etcd cluster on loopback with fsync, as SQLite's
# synchronous=FULL, led by one of three replicas), etcd's gRPC API against
# its JSON gateway on the same requests, and the failover: the
# leader SIGKILLed 20 times, each time the ms until a PATCH sent to the
# replicas in turn (following 307s) succeeds, then the killed replica
# restarted (it rejoins as a follower).
if [ -x "$build/tessera-api-load" ] && ./scripts/k8s-bins.sh >/dev/null; then
  echo
  echo "== tessera serve's store, side by side on S3 (4 keep-alive connections, 5 s, PATCH with"
  echo "   replan false, to the leader): SQLite (--store sqlite:) and etcd (3 members, 3 replicas);"
  echo "   then failover: the leader SIGKILLed 20 times (--lease-ttl ${LEASE_TTL:=2}), ms until a PATCH succeeds"
  work=$(mktemp -d)
  etcd_bin=build/k8s/bin/etcd
  ports=$(python3 -c 'import socket
ss=[socket.socket() for _ in range(9)]
[s.bind(("127.0.0.1", 0)) for s in ss]
print(" ".join(str(s.getsockname()[1]) for s in ss))')
  read -r -a port <<<"$ports"
  clients="http://127.0.0.1:${port[0]},http://127.0.0.1:${port[2]},http://127.0.0.1:${port[4]}"
  initial="m0=http://127.0.0.1:${port[1]},m1=http://127.0.0.1:${port[3]},m2=http://127.0.0.1:${port[5]}"
  replica_ports=("${port[6]}" "${port[7]}" "${port[8]}")
  etcd_pids=()
  for m in 0 1 2; do
    c=$(echo "$clients" | cut -d, -f$((m + 1)))
    p=$(echo "$initial" | cut -d, -f$((m + 1)) | cut -d= -f2)
    "$etcd_bin" --name "m$m" --data-dir "$work/etcd-$m" --listen-client-urls "$c" \
      --advertise-client-urls "$c" --listen-peer-urls "$p" --initial-advertise-peer-urls "$p" \
      --initial-cluster "$initial" --initial-cluster-state new >"$work/etcd-$m.log" 2>&1 &
    etcd_pids+=($!)
  done
  for _ in $(seq 100); do
    curl -sf "$(echo "$clients" | cut -d, -f1)/health" >/dev/null && break
    sleep 0.1
  done
  start_serve() {  # start_serve OUT ARGS...: tessera serve in the background; its URL on stdout
    local out=$1
    shift
    "$build/tessera" serve --no-auto "$@" >"$out" 2>&1 &
    echo $! >"$out.pid"
    for _ in $(seq 300); do
      url=$(sed -n 's/.*listening on \(http:[^ ]*\).*/\1/p' "$out")
      [ -n "$url" ] && { echo "$url"; return; }
      sleep 0.1
    done
  }
  stop_serve() { kill "$(cat "$1.pid")" 2>/dev/null; wait "$(cat "$1.pid")" 2>/dev/null || true; }
  patch_load() {
    "$build/tessera-api-load" --url "$1" load --method PATCH --path /v1/services/bert \
      --connections 4 --seconds 5 \
      --body '{"rate_rps": 46.5, "replan": false}' --body '{"rate_rps": 46, "replan": false}'
  }
  url=$(start_serve "$work/sqlite.out" --listen 127.0.0.1:0 --store "sqlite:$work/state.db")
  echo "PATCH, sqlite:               $(patch_load "$url")"
  stop_serve "$work/sqlite.out"
  replica() {  # replica I: starts replica I of three on etcd
    start_serve "$work/r$1.out" --listen "127.0.0.1:${replica_ports[$1]}" --name "r$1" \
      --store "etcd:$clients" --lease-ttl "$LEASE_TTL" >/dev/null
  }
  for i in 0 1 2; do replica "$i"; done
  leader() {  # the index of the replica whose /readyz says it leads
    for i in 0 1 2; do
      curl -sf "http://127.0.0.1:${replica_ports[$i]}/readyz" 2>/dev/null |
        grep -q '"role":"leader"' && { echo "$i"; return; }
    done
  }
  l=$(leader)
  echo "PATCH, etcd (3 members):     $(patch_load "http://127.0.0.1:${replica_ports[$l]}")"
  # The client's transport, measured: etcd's gRPC API (the Go client) and
  # its JSON gateway (what the EtcdStore speaks), the same requests
  # interleaved (tools/k8s-cluster/etcdbench).
  if (cd tools/k8s-cluster && go build -mod=readonly -trimpath -o "$work/etcdbench" ./etcdbench); then
    echo "etcd's transports, one client, sequential (the store's write transaction and range):"
    "$work/etcdbench" -endpoint "$(echo "$clients" | cut -d, -f1)" -n 1000 | sed 's/^/  /'
  fi
  : >"$work/failover_ms"
  for k in $(seq 20); do
    l=$(leader)
    while [ -z "$l" ]; do sleep 0.1; l=$(leader); done
    kill -KILL "$(cat "$work/r$l.out.pid")"
    t0=$(date +%s%N)
    i=0
    until curl -sf -L -m 2 -o /dev/null -X PATCH -H 'Content-Type: application/json' \
      -d "{\"rate_rps\": $((46 + k)), \"replan\": false}" \
      "http://127.0.0.1:${replica_ports[$i]}/v1/services/bert" 2>/dev/null; do
      i=$(((i + 1) % 3))
      sleep 0.02
    done
    echo $((($(date +%s%N) - t0) / 1000000)) >>"$work/failover_ms"
    wait "$(cat "$work/r$l.out.pid")" 2>/dev/null || true
    replica "$l"
  done
  sort -n "$work/failover_ms" | awk -v ttl="$LEASE_TTL" '{a[NR]=$1} END {
    printf "failover, 20 kills:          median %d ms  p99 %d ms  min %d ms  (bound: lease %d s + 1 s = %d ms)\n",
      a[int((NR+1)/2)], a[NR], a[1], ttl, ttl * 1000 + 1000}'
  for i in 0 1 2; do stop_serve "$work/r$i.out"; done
  kill "${etcd_pids[@]}" 2>/dev/null
  wait "${etcd_pids[@]}" 2>/dev/null || true
  rm -rf "$work"
fi

if [ -x "$build/tessera_k8s_tests" ] && ./scripts/k8s-bins.sh >/dev/null; then
  echo
  echo "== Kubernetes end to end: real kube-apiserver, kube-scheduler (v1.37.2) and etcd on loopback,"
  echo "   tessera serve as the extender (GRMU): pods created in trace order until each is bound or"
  echo "   refused (tests/k8s_extender_test.cc)"
  "$build/tessera_k8s_tests" --gtest_filter='KubeExtenderTest.MixedProfiles*:KubeExtenderTest.Alibaba*' 2>&1 |
    sed -n 's/^\[ figure \] //p'
fi

if command -v haproxy >/dev/null && [ -f "$build/libtessera-fake-nvml.so" ]; then
  echo
  echo "== whole process: tessera rehearse (docs/rehearse.md) at its default dilation: wall seconds"
  echo "   of the load and of the whole run (plan, agents, HAProxy, load, stop) per simulated second"
  printf '%-34s %9s %10s %11s %11s %12s %10s\n' run dilation plan_s load_wall_s total_wall_s \
    wall_per_sim_s lowest
  work=$(mktemp -d)
  rehearse() {  # rehearse NAME ARGS...: one row
    local name=$1; shift
    local begin end
    begin=$(date +%s.%N)
    "$build/tessera" rehearse "$@" --format json -o "$work/r.json" --base-port 20000 \
      --router-base-port 19900 --router-metrics-port 19990 2>/dev/null
    end=$(date +%s.%N)
    python3 - "$work/r.json" "$name" "$begin" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
total = float(sys.argv[4]) - float(sys.argv[3])
lowest = min(s["compliance"] for s in r["services"])
print(f"{sys.argv[2]:<34} {r['dilation']:9g} {r['duration_s']:10g} {r['wall_s']:11.1f} "
      f"{total:11.1f} {total / r['duration_s']:12.1f} {100 * lowest:9.3f}%")
PY
  }
  rehearse "S3, 5 s" --scenario examples/scenarios/s3.yaml --duration 5s
  "$build/tessera" plan --scenario examples/scenarios/s3.yaml --format json -o "$work/day.json"
  "$build/tessera" plan --scenario examples/scenarios/s3-night.yaml --format json \
    -o "$work/night.json"
  "$build/tessera" transition --scenario examples/scenarios/s3-night.yaml --from "$work/day.json" \
    --to "$work/night.json" --spare-gpus 1 --format json -o "$work/t.json" 2>/dev/null
  rehearse "S3 day -> night, 2 s windows" --scenario examples/scenarios/s3-floor.yaml \
    --deployment "$work/day.json" --transition "$work/t.json" --step-seconds 2
  rm -rf "$work"
fi

echo
echo "== autoscale: a day of S6 on the shipped day shape (1,440 minutes, three strategies each"
echo "   simulated minute by minute), wall s of the whole run and the day's figures"
printf '%-26s %8s %10s %10s %10s %8s %8s\n' forecaster wall_s autoscale static oracle vs_peak vs_oracle
work=$(mktemp -d)
for forecaster in holt seasonal; do
  begin=$(date +%s.%N)
  "$build/tessera" autoscale --scenario examples/scenarios/s6.yaml \
    --rates examples/days/alibaba-2023-day.csv --forecaster "$forecaster" --format json \
    -o "$work/day.json" 2>/dev/null
  end=$(date +%s.%N)
  python3 - "$work/day.json" "$forecaster" "$begin" "$end" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
a, s, o = (x["gpu_hours"] for x in r["strategies"])
print(f"{sys.argv[2]:<26} {float(sys.argv[4]) - float(sys.argv[3]):8.1f} {a:10.2f} {s:10.2f} "
      f"{o:10.2f} {a / s:8.3f} {a / o:8.3f}")
PY
done
rm -rf "$work"
