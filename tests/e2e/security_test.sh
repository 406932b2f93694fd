#!/usr/bin/env bash
# Security end to end: histd and histctl as processes, certificates made with openssl.
#   bash security_test.sh <path-to-histd> <path-to-histctl>
# Protected mode refuses 0.0.0.0 without credentials (saying what to configure) and starts
# with --allow_insecure; over TLS with tokens, histctl says which part failed (connection,
# certificate, credentials, role) and exits 1; allowed roles are served; the plaintext
# health port answers health only; the HTTP endpoint's histogram pages need a reader's
# token (Bearer, or Basic with the token as password) while probes and /metrics stay open;
# SIGTERM exits 0.
set -euo pipefail

HISTD=${1:?usage: security_test.sh HISTD HISTCTL}
HISTCTL=${2:?usage: security_test.sh HISTD HISTCTL}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/histd_security.XXXXXX")
HISTD_PID=""
cleanup() {
  if [[ -n $HISTD_PID ]] && kill -0 "$HISTD_PID" 2>/dev/null; then kill -KILL "$HISTD_PID" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
STEP=""
step() { STEP=$1; echo "security: $1"; }
fail() {
  echo "security: FAIL at '$STEP': $*" >&2
  [[ -f $WORK/histd.log ]] && tail -n 20 "$WORK/histd.log" >&2
  exit 1
}

# Runs histctl; sets OUT (stdout and stderr) and RC.
run_ctl() {
  set +e
  OUT=$("$HISTCTL" --timeout=20 "$@" 2>&1)
  RC=$?
  set -e
}
expect_failure() {  # expect_failure WHAT TEXT histctl-args...
  local what=$1 text=$2
  shift 2
  run_ctl "$@"
  [[ $RC -eq 1 ]] || fail "$what: exit $RC, want 1: $OUT"
  [[ $OUT == *"$text"* ]] || fail "$what: '$text' not in: $OUT"
}

step "protected mode"
set +e
timeout 30 "$HISTD" --engine=cpu --address=0.0.0.0:0 >"$WORK/refused.log" 2>&1
RC=$?
set -e
[[ $RC -eq 1 ]] || fail "histd on 0.0.0.0 without credentials exited $RC, want 1"
for hint in "protected mode" "--tls_cert" "--auth_tokens_file" "--allow_insecure"; do
  grep -q -- "$hint" "$WORK/refused.log" || fail "the refusal does not say '$hint'"
done
"$HISTD" --engine=cpu --address=0.0.0.0:0 --allow_insecure --ready_file="$WORK/open" \
  >"$WORK/open.log" 2>&1 &
HISTD_PID=$!
for _ in $(seq 1 300); do [[ -s $WORK/open ]] && break; sleep 0.1; done
[[ -s $WORK/open ]] || fail "histd --allow_insecure did not start"
kill -TERM "$HISTD_PID"
wait "$HISTD_PID" || fail "histd --allow_insecure did not exit 0"
HISTD_PID=""

step "certificates and tokens"
cd "$WORK"
for ca in ca other; do
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -keyout $ca.key \
    -out $ca.pem -subj "/CN=histd test $ca" >/dev/null 2>&1
done
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout tls.key -out tls.csr \
  -subj "/CN=localhost" >/dev/null 2>&1
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
openssl x509 -req -days 2 -in tls.csr -CA ca.pem -CAkey ca.key -set_serial 1 -out tls.crt \
  -extfile san.ext >/dev/null 2>&1
openssl rand -hex 32 >reader.token
openssl rand -hex 32 >producer.token
{
  echo "# test identities"
  echo "sha256:$(tr -d '\n' <reader.token | sha256sum | cut -d' ' -f1) rita reader"
  echo "sha256:$(tr -d '\n' <producer.token | sha256sum | cut -d' ' -f1) pete producer"
} >tokens
cd - >/dev/null

step "start histd with TLS, tokens and a health port"
"$HISTD" --engine=cpu --address=127.0.0.1:0 --ready_file="$WORK/ready" \
  --tls_cert="$WORK/tls.crt" --tls_key="$WORK/tls.key" --auth_tokens_file="$WORK/tokens" \
  --health_address=127.0.0.1:0 --http_address=127.0.0.1:0 --http_tls >"$WORK/histd.log" 2>&1 &
HISTD_PID=$!
for _ in $(seq 1 300); do [[ -s $WORK/ready ]] && break; sleep 0.1; done
[[ -s $WORK/ready ]] || fail "histd did not start"
ADDR=$(head -n 1 "$WORK/ready" | tr -d '[:space:]')
HTTP=$(sed -n 2p "$WORK/ready" | tr -d '[:space:]')
[[ -n $HTTP ]] || fail "no HTTP address in --ready_file"
HEALTH=$(sed -n "s/.*health_only_address=\([0-9.:]*\).*/\1/p" "$WORK/histd.log" | head -n 1)
[[ -n $HEALTH ]] || fail "no health address in the log"

step "failures say what failed"
expect_failure "plaintext client" "(connection failed" --server="$ADDR" list
expect_failure "wrong CA" "(TLS certificate problem" --server="$ADDR" --tls_ca="$WORK/other.pem" list
expect_failure "no token" "(credentials refused" --server="$ADDR" --tls_ca="$WORK/ca.pem" list
HISTD_TOKEN=not-a-token expect_failure "unknown token" "UNAUTHENTICATED" \
  --server="$ADDR" --tls_ca="$WORK/ca.pem" list
expect_failure "reader creates" "(role not allowed" --server="$ADDR" --tls_ca="$WORK/ca.pem" \
  --token_file="$WORK/reader.token" create wafer --rows=4 --cols=4
[[ $OUT == *"PERMISSION_DENIED"*"CreateHistogram"*"reader"* ]] || fail "refusal text: $OUT"

step "allowed roles are served"
run_ctl --server="$ADDR" --tls_ca="$WORK/ca.pem" --token_file="$WORK/producer.token" \
  create wafer --rows=4 --cols=4
[[ $RC -eq 0 ]] || fail "producer create: $OUT"
printf '\x01\x00\x00\x00\x01\x00\x00\x00' >"$WORK/two.u32"
run_ctl --server="$ADDR" --tls_ca="$WORK/ca.pem" --token_file="$WORK/producer.token" \
  ingest wafer "$WORK/two.u32"
[[ $RC -eq 0 ]] || fail "producer ingest: $OUT"
HISTD_TOKEN=$(cat "$WORK/reader.token") run_ctl --server="$ADDR" --tls_ca="$WORK/ca.pem" info wafer
[[ $RC -eq 0 && $OUT == *"samples_applied: 2"* ]] || fail "reader info: $OUT"
run_ctl --server="$ADDR" --tls_ca="$WORK/ca.pem" --token_file="$WORK/reader.token" stats
[[ $OUT == *"auth_permission_denied: 1"* ]] || fail "stats do not count the refusal: $OUT"

step "the health port serves health only, in plaintext"
run_ctl --server="$HEALTH" health
[[ $RC -eq 0 && $OUT == *SERVING* ]] || fail "health port: $OUT"
expect_failure "histd method on the health port" "UNIMPLEMENTED" --server="$HEALTH" list

step "the HTTP endpoint over TLS: pages need a reader, probes and /metrics do not"
# http_status PATH [AUTHORIZATION [SCHEME]]: the status code (and WWW-Authenticate) of a
# GET over https trusting ca.pem (or http), "refused" when no HTTP answer comes.
http_status() {
  python3 - "$HTTP" "$1" "${2:-}" "${3:-https}" "${HTTP_CA:-$WORK/ca.pem}" <<'PY'
import ssl, sys, urllib.request, urllib.error
host, path, auth, scheme, ca = sys.argv[1:6]
req = urllib.request.Request(f"{scheme}://{host}{path}")
if auth:
    req.add_header("Authorization", auth)
try:
    with urllib.request.urlopen(req, timeout=10, context=ssl.create_default_context(cafile=ca)) as r:
        print(r.status)
except urllib.error.HTTPError as e:
    print(e.code, e.headers.get("WWW-Authenticate", ""))
except (urllib.error.URLError, ConnectionError, OSError):
    print("refused")
PY
}
READER=$(cat "$WORK/reader.token")
BASIC=$(printf 'anyone:%s' "$READER" | base64 -w0)
for path in /healthz /readyz /metrics; do
  [[ $(http_status $path) == 200 ]] || fail "$path without a token: $(http_status $path)"
done
[[ $(http_status /render/wafer.png) == '401 Basic realm="histd"' ]] ||
  fail "render without a token: $(http_status /render/wafer.png)"
[[ $(http_status /render/wafer.png "Bearer not-a-token") == 401* ]] || fail "render, unknown token"
[[ $(http_status /render/wafer.png "Bearer $READER") == 200 ]] || fail "render, reader's token"
[[ $(http_status / "Basic $BASIC") == 200 ]] || fail "web page, Basic with the reader's token"
[[ $(http_status /api/histograms) == 401* ]] || fail "the page's API without a token"
[[ $(http_status /healthz "" http) == refused ]] || fail "plaintext HTTP to the TLS endpoint"

step "a renewed certificate serves new HTTPS connections without a restart"
[[ $(HTTP_CA="$WORK/other.pem" http_status /healthz) == refused ]] ||
  fail "a client trusting another CA was served"
(cd "$WORK" && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout new.key \
  -out new.csr -subj "/CN=localhost" >/dev/null 2>&1 &&
  openssl x509 -req -days 2 -in new.csr -CA other.pem -CAkey other.key -set_serial 2 \
    -out new.crt -extfile san.ext >/dev/null 2>&1 &&
  cp new.key tls.key.tmp && mv tls.key.tmp tls.key && cp new.crt tls.crt.tmp && mv tls.crt.tmp tls.crt)
export HTTP_CA="$WORK/other.pem"  # the client now trusts only the new issuer
for _ in $(seq 1 40); do [[ $(http_status /healthz) == 200 ]] && break; sleep 0.25; done
[[ $(http_status /healthz) == 200 ]] || fail "HTTPS with the renewed certificate: $(http_status /healthz)"

step "SIGTERM"
kill -TERM "$HISTD_PID"
wait "$HISTD_PID" || fail "histd did not exit 0"
HISTD_PID=""
echo "security: PASS"
