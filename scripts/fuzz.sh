#!/usr/bin/env bash
# Runs every libFuzzer harness built in BUILD_DIR for SECONDS each, seeded
# with fuzz/corpus/<harness>/ (read only); new inputs it finds go to
# BUILD_DIR/corpus/<harness>/. A crash, a sanitizer report or a timeout
# (10 s on one input) stops it with the reproducer saved in BUILD_DIR.
# Usage: scripts/fuzz.sh BUILD_DIR SECONDS
set -euo pipefail
build=${1:?usage: scripts/fuzz.sh BUILD_DIR SECONDS}
seconds=${2:?usage: scripts/fuzz.sh BUILD_DIR SECONDS}
cd "$(dirname "$0")/.."
status=0
for seed in fuzz/corpus/*/; do
  name=$(basename "$seed")
  [ -x "$build/$name" ] || { echo "fuzz: $build/$name is not built" >&2; exit 2; }
  mkdir -p "$build/corpus/$name"
  echo "== $name: $seconds s"
  if ! "$build/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$build/$name-" -print_final_stats=1 \
      "$build/corpus/$name" "$seed" 2>"$build/$name.log"; then
    echo "fuzz: $name failed; see $build/$name.log" >&2
    tail -n 30 "$build/$name.log" >&2
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/$name.log" || true
done
exit $status
