#!/usr/bin/env bash
# The Python virtual environment of the deployment validators
# (tests/deploy/, run by `make test`), of schemathesis (ctest's
# ApiSchemathesis: tests/api/schemathesis.sh) and of the Python package
# (python/: scripts/pypackage.sh installs it here, ctest's PythonPackage
# tests it): creates it with `python3 -m venv` and
# pip-installs the pinned requirements below, only when the stamp file in it
# does not hold exactly this list; otherwise does nothing.
#
#   scripts/pyenv.sh [VENV]                 create or check VENV (default build/pyenv)
#   scripts/pyenv.sh --run VENV -- ARGS...  run VENV's python with ARGS; never installs,
#                                           fails with a hint when VENV is missing
#                                           (ctest runs tests in parallel: `make test`
#                                           creates the venv before ctest starts)
set -euo pipefail

REQUIREMENTS=(kubernetes-validate==1.37.0 "tritonclient[grpc]==2.73.0" pytest pyyaml schemathesis==4.32.5
              # The Python package (python/, scripts/pypackage.sh): its build backend and
              # bindings, and what its tests and example use when installed.
              scikit-build-core==1.1.2 nanobind==3.1.0 numpy pandas==3.1.1 matplotlib==3.11.2
              # The type checker of the package's tests, example and benchmark (PythonTypes).
              mypy==1.20.2)

if [[ "${1:-}" == "--run" ]]; then
  venv="${2:?usage: pyenv.sh --run VENV -- ARGS...}"
  shift 2
  [[ "${1:-}" == "--" ]] && shift
  stamp="$venv/.tessera-requirements"
  if [[ ! -x "$venv/bin/python" || ! -f "$stamp" || "$(cat "$stamp")" != "${REQUIREMENTS[*]}" ]]; then
    echo "pyenv: $venv is missing or stale; run scripts/pyenv.sh $venv (make test does)" >&2
    exit 1
  fi
  exec "$venv/bin/python" "$@"
fi

venv="${1:-build/pyenv}"
stamp="$venv/.tessera-requirements"
if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "${REQUIREMENTS[*]}" ]]; then
  echo "pyenv: $venv is up to date (${REQUIREMENTS[*]})"
  exit 0
fi
if ! python3 -c 'import ensurepip' 2>/dev/null; then
  echo "pyenv: python3 lacks ensurepip (Debian: apt-get install python3-venv; scripts/setup.sh does)" >&2
  exit 1
fi
echo "pyenv: creating $venv with ${REQUIREMENTS[*]}"
start=$(date +%s)
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}"
echo "${REQUIREMENTS[*]}" > "$stamp"
echo "pyenv: $venv ready in $(($(date +%s) - start)) s"
