#!/usr/bin/env bash
# Installs the Debian packages Tessera builds with, and nothing when all are present.
# Idempotent: apt-get runs only when at least one package is missing.
set -euo pipefail

packages=(
  cmake g++ make
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev
  coinor-libcbc-dev pkg-config
  # CBC is linked statically (CMakeLists.txt, TESSERA_STATIC_CBC): the reference LAPACK
  # and BLAS archives and bzip2's, which its shared libraries would have loaded.
  liblapack-dev libblas-dev libbz2-dev
  # tessera serve: its state (SQLite) and its HTTP server and client.
  libsqlite3-dev libcpp-httplib-dev
  # The deployment validators' virtual environment (scripts/pyenv.sh), and the
  # headers the Python package's extension module compiles against (python/).
  python3-venv python3-dev
  # The dashboard's browser test: Chromium, driven from Node.js (scripts/nodeenv.sh).
  chromium nodejs
  # The router `tessera deploy` ships (HAProxy 2.6): its configs are checked with
  # `haproxy -c` (tests/deploy/).
  haproxy
  # The Kubernetes tests' certificates (tests/k8s_cluster.cc); their control plane is
  # built with the machine's Go by scripts/k8s-bins.sh.
  openssl
)
# npm: Debian's package, unless Node.js came with its own (NodeSource's does,
# and conflicts with Debian's npm).
if ! command -v npm >/dev/null; then packages+=(npm); fi
# `setup.sh --fuzz` (make fuzz): clang and its libFuzzer runtime too.
if [ "${1:-}" = "--fuzz" ]; then packages+=(clang libclang-rt-dev); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
