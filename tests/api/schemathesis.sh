#!/usr/bin/env bash
# ctest's ApiSchemathesis: starts `tessera serve` on a free loopback port with
# a token and a fresh store, then runs schemathesis against the OpenAPI
# document it serves (/v1/openapi.json), with the token, every check that
# compares a reply with the document (no 5xx, documented status codes,
# content types and response schemas), a bounded number of examples per
# operation and a fixed seed. Any finding fails the test.
#
#   tests/api/schemathesis.sh TESSERA PYENV_SCRIPT VENV [MAX_EXAMPLES]
set -euo pipefail

tessera="${1:?usage: schemathesis.sh TESSERA PYENV_SCRIPT VENV [MAX_EXAMPLES]}"
pyenv="${2:?}"
venv="${3:?}"
max_examples="${4:-10}"

dir=$(mktemp -d)
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}
trap cleanup EXIT

token="schemathesis-$RANDOM$RANDOM"
echo "$token" > "$dir/token"
# --no-auto: the fuzzed rates must not start transitions behind the checks;
# --router-agent: the router routes answer for one router.
"$tessera" serve --listen 127.0.0.1:0 --db "$dir/api.db" --token-file "$dir/token" --no-auto \
  --router-agent edge \
  > "$dir/out" 2> "$dir/err" &
pid=$!
url=""
for _ in $(seq 600); do
  url=$(sed -n 's/^tessera serve: listening on \(http:[^ ]*\) .*/\1/p' "$dir/out")
  [[ -n "$url" ]] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "schemathesis.sh: tessera serve exited before listening:" >&2
    cat "$dir/err" >&2
    exit 1
  fi
  sleep 0.1
done
[[ -n "$url" ]] || { echo "schemathesis.sh: tessera serve did not listen within 60 s" >&2; exit 1; }

"$pyenv" --run "$venv" -- -m schemathesis.cli run "$url/v1/openapi.json" \
  --url "$url" \
  --header "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-examples "$max_examples" \
  --seed 1 \
  --request-timeout 90 \
  --no-color
