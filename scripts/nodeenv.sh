#!/usr/bin/env bash
# The Node.js packages of the dashboard's browser test (tests/dashboard/,
# ctest's DashboardE2E, run by `make test`): `npm ci` of
# tests/dashboard/package-lock.json into DIR, only when the stamp file in DIR
# (the lock file of its last finished install) differs from it; otherwise
# does nothing.
#
#   scripts/nodeenv.sh [DIR]                 create or check DIR (default build/nodeenv)
#   scripts/nodeenv.sh --run DIR -- ARGS...  run node with ARGS and NODEENV=DIR; never
#                                            installs, fails with a hint when DIR is missing
#                                            or stale (ctest runs tests in parallel:
#                                            `make test` installs before ctest starts)
set -euo pipefail

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/dashboard"

up_to_date() { cmp -s "$source_dir/package-lock.json" "$1/.tessera-lock"; }

if [[ "${1:-}" == "--run" ]]; then
  dir="${2:?usage: nodeenv.sh --run DIR -- ARGS...}"
  shift 2
  [[ "${1:-}" == "--" ]] && shift
  if ! up_to_date "$dir"; then
    echo "nodeenv: $dir is missing or stale; run scripts/nodeenv.sh $dir (make test does)" >&2
    exit 1
  fi
  NODEENV="$(cd "$dir" && pwd)" exec node "$@"
fi

dir="${1:-build/nodeenv}"
if up_to_date "$dir"; then
  echo "nodeenv: $dir is up to date"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "nodeenv: npm is missing (Debian: apt-get install nodejs npm; scripts/setup.sh does)" >&2
  exit 1
fi
echo "nodeenv: npm ci into $dir"
start=$(date +%s)
mkdir -p "$dir"
rm -f "$dir/.tessera-lock"
cp "$source_dir/package.json" "$source_dir/package-lock.json" "$dir/"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
cp "$source_dir/package-lock.json" "$dir/.tessera-lock"
echo "nodeenv: $dir ready in $(($(date +%s) - start)) s"
