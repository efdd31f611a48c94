#!/usr/bin/env bash
# Plans the same inputs with two builds of tessera and says whether every
# plan is the same: the check that a refactoring changed no figure.
#
#   scripts/compare_plans.sh BASE_TESSERA NEW_TESSERA [DATA_DIR]
#
# Inputs: every planner of `tessera compare --list` on the bundled scenarios
# S1-S6 (MIG planners on the embedded profiles; MPS planners on the
# coefficients they derive from them), ParvaGPU's rows 1-6 on its measured
# profiles and the iGniter workload on iGniter's fitted V100 coefficients,
# when DATA_DIR (default: TESSERA_SHARED_DATA_DIR, else ../shared/data
# beside the repository; docs/data-sources.md) holds them. Each plan is
# `tessera plan --format json`; the planner's wall time (metrics.plan_ms),
# the record of the profiles' source (a plan made before plans recorded it
# has none) and anything a search under a clock may change (migserving-ga)
# are left out. Prints one line per input that differs, then a summary; exits 1 when
# any differs, 2 on bad arguments.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 2 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
base="$1"
new="$2"
data="${3:-${TESSERA_SHARED_DATA_DIR:-../shared/data}}"
for bin in "$base" "$new"; do
  [[ -x "$bin" ]] || { echo "compare_plans: $bin is not an executable" >&2; exit 2; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The JSON of a plan without what a clock decides.
normalise() {
  python3 -c '
import json, sys
try:
    plan = json.load(sys.stdin)
except ValueError:
    print("not json"); sys.exit()
plan.get("metrics", {}).pop("plan_ms", None)
plan.pop("profiles", None)  # where the profiles came from: a record, not a figure
print(json.dumps(plan, sort_keys=True))'
}

compared=0
differ=0
skipped=0
# compare NAME ARGS...: one plan by both builds.
compare() {
  local name="$1"
  shift
  local a b
  a="$("$base" plan "$@" --format json 2>"$work/base.err")"
  local rc_a=$?
  b="$("$new" plan "$@" --format json 2>"$work/new.err")"
  local rc_b=$?
  compared=$((compared + 1))
  if [[ $rc_a -ne $rc_b ]]; then
    echo "DIFFERS $name: exit $rc_a (base) vs $rc_b (new): $(tail -n 1 "$work/new.err")"
    differ=$((differ + 1))
    return
  fi
  if [[ $rc_a -ne 0 && $rc_a -ne 3 ]]; then
    if ! diff -q "$work/base.err" "$work/new.err" >/dev/null; then
      echo "DIFFERS $name: error messages: $(tail -n 1 "$work/base.err") / $(tail -n 1 "$work/new.err")"
      differ=$((differ + 1))
    fi
    return
  fi
  if [[ "$(normalise <<<"$a")" != "$(normalise <<<"$b")" ]]; then
    echo "DIFFERS $name"
    differ=$((differ + 1))
  fi
}

mapfile -t planners < <("$new" compare --list | awk '{print $1}' | grep -v '^migserving-ga$')
mig_planners=()
mps_planners=()
for p in "${planners[@]}"; do
  case "$p" in
    igniter | ffd+ | gslice+ | gpulet) mps_planners+=("$p") ;;
    *) mig_planners+=("$p") ;;
  esac
done

for s in s1 s2 s3 s4 s5 s6; do
  for p in "${mig_planners[@]}"; do compare "$s $p" --scenario "examples/scenarios/$s.yaml" --planner "$p"; done
  for p in igniter ffd+ gslice+; do compare "$s $p" --scenario "examples/scenarios/$s.yaml" --planner "$p"; done
done
compare "s3 default" --scenario examples/scenarios/s3.yaml

if [[ -d "$data/parvagpu/prof_data" ]]; then
  for row in 1 2 3 4 5 6; do
    for p in "${mig_planners[@]}"; do
      compare "row $row $p" --profiles "$data/parvagpu/prof_data" --parva-slo "$data/parvagpu/SLO" \
        --row "$row" --planner "$p"
    done
  done
else
  echo "compare_plans: $data/parvagpu/prof_data is absent: ParvaGPU's rows skipped" >&2
  skipped=$((skipped + 1))
fi
coeffs="$data/igniter/derived/fitted_coefficients_v100.json"
if [[ -f "$coeffs" ]]; then
  for p in "${mps_planners[@]}"; do
    extra=()
    [[ "$p" == gpulet ]] && extra=(--gpulet-tables "$data/igniter/i-Gniter/Profile/tools/gpulet.config")
    [[ "$p" == gpulet && ! -f "${extra[1]}" ]] && continue
    compare "igniter-12 $p" --scenario examples/scenarios/igniter-12.yaml --coeffs "$coeffs" \
      --planner "$p" "${extra[@]}"
  done
else
  echo "compare_plans: $coeffs is absent: the iGniter workload skipped" >&2
  skipped=$((skipped + 1))
fi

echo "compare_plans: $compared plans compared, $differ differ ($skipped data sets absent)"
[[ $differ -eq 0 ]]
