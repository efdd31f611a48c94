#!/usr/bin/env bash
# Builds the Python package (python/) from source and installs it into a
# virtual environment made by scripts/pyenv.sh: `pip install ./python` with
# the build backend and nanobind that venv already holds (no build
# isolation, so nothing is downloaded here) and a build directory that is
# kept, so that a second run recompiles only what changed.
#
#   scripts/pypackage.sh [VENV [BUILD_DIR [CORE_BUILD_DIR]]]
#       default build/pyenv, build/python, none
#
# CORE_BUILD_DIR, a Release build of the repository (make build), makes the
# module link that build's core archives instead of compiling the core
# again (python/CMakeLists.txt, TESSERA_CORE_BUILD_DIR); `make test` does.
#
# TESSERA_WERROR=ON (CI) builds the extension with -Werror as the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${1:-build/pyenv}"
# Absolute: pip reads a relative build-dir from python/, the project's root.
build_dir="$(realpath -m "${2:-build/python}")"
core_dir=""
if [[ -n "${3:-}" ]]; then core_dir="$(realpath -m "$3")"; fi
if [[ ! -x "$venv/bin/python" ]]; then
  echo "pypackage: $venv is missing; run scripts/pyenv.sh $venv first (make test does)" >&2
  exit 1
fi
start=$(date +%s)
log="$build_dir.log"
mkdir -p "$(dirname "$log")"
echo "pypackage: building python/ into $venv (build dir $build_dir${core_dir:+, the core archives of $core_dir}, log $log)"
if ! "$venv/bin/python" -m pip install --no-build-isolation --no-deps --disable-pip-version-check \
    --force-reinstall -C "build-dir=$build_dir" \
    -C "cmake.define.TESSERA_WERROR=${TESSERA_WERROR:-OFF}" \
    -C "cmake.define.TESSERA_CORE_BUILD_DIR=$core_dir" ./python >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "pypackage: pip install ./python failed; the whole log is $log" >&2
  exit 1
fi
wheel=$(find "$venv" -name '_core*.so' -path '*tessera*' | head -n 1)
echo "pypackage: tessera installed in $(($(date +%s) - start)) s ($(du -h "$wheel" | cut -f1) module)"
