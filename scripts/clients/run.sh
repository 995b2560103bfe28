#!/usr/bin/env bash
# Proves docs/clients.md with real clients: starts robotsgate (built from this
# checkout) and local HTTP/HTTPS origins whose robots.txt disallows /private,
# then runs every installed client of the table through robotsgate and checks
# 200 for an allowed URL and 403 for a disallowed one, over HTTP and HTTPS
# (robotsgate's MITM CA exported with `robotsgate ca -pem`). It also checks
# the pitfalls the table states, loads a page whose stylesheet is
# disallowed in headless Chromium (alone, and driven by Playwright and
# Puppeteer), opens the admin status page in headless Chromium (refused
# without the token, no console error, refusals shown, also those made
# before its stream opened), runs examples/scrapy against an origin
# with a Crawl-delay, and crawls the origins with examples/crawlee (each
# refused URL audited once). Prints what ran and what was skipped; exits 1 on any
# failure.
#
#   scripts/clients/run.sh            (needs go; every other client is optional)
#   CLIENTS_REQUIRE=all scripts/clients/run.sh   (a skipped client is a failure;
#                     CI uses all-but-java: Java only when a JDK is installed)
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/scripts/clients
WORK=$(mktemp -d "${TMPDIR:-/tmp}/robotsgate-clients.XXXXXX")
PIDS=()
cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "${KEEP_WORK:-}" = 1 ]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

PASSED=() FAILED=() RAN=() SKIPPED=() CONNECT_UAS=()
fail() { FAILED+=("$1"); echo "FAIL  $1" >&2; }
skip() { SKIPPED+=("$1 ($2)"); echo "skip  $1: $2"; }

# expect NAME WANT COMMAND...: COMMAND prints one status code per line;
# WANT is the space-separated list of the codes expected. A COMMAND that
# is a shell function runs without timeout (which runs only programs).
expect() {
  local name=$1 want=$2 got run=(timeout 300)
  shift 2
  if declare -F "$1" >/dev/null; then run=(); fi
  got=$("${run[@]}" "$@" 2>"$WORK/last.err" | tr '\n' ' ' | sed 's/ *$//')
  if [ "$got" = "$want" ]; then
    PASSED+=("$name")
    echo "ok    $name: $got"
  else
    fail "$name: got '${got}', want '$want' ($(tail -n 3 "$WORK/last.err" | tr '\n' ' '))"
  fi
}

# pair CLIENT COMMAND...: one run of COMMAND with an allowed and a
# disallowed URL over HTTP, then over HTTPS (the URLs are appended).
pair() {
  local client=$1
  shift
  RAN+=("$client")
  expect "$client: http /public, http /private/x, https /public, https /private/x" "200 403 200 403" \
    "$@" "$H/public" "$H/private/x" "$S/public" "$S/private/x"
}

# fact NAME WANT COMMAND...: a pitfall the docs state (e.g. "this client
# bypasses the proxy": the origin answers the disallowed probe itself).
fact() { expect "pitfall: $1" "${@:2}"; }

echo "== building robotsgate and the test programs"
cd "$ROOT" || exit 1
for p in robotsgate:./cmd/robotsgate origin:./scripts/clients/origin goclient:./scripts/clients/goclient; do
  go build -o "$WORK/${p%%:*}" "${p#*:}" || { echo "build of ${p#*:} failed" >&2; exit 1; }
done

"$WORK/origin" -dir "$WORK" -crawl-delay 2 2>"$WORK/origin.log" &
PIDS+=($!)
for _ in $(seq 100); do [ -f "$WORK/ports.env" ] && break; sleep 0.1; done
[ -f "$WORK/ports.env" ] || { echo "origin did not start: $(cat "$WORK/origin.log")" >&2; exit 1; }
# shellcheck disable=SC1091
. "$WORK/ports.env"
H=http://127.0.0.1:$HTTP_PORT
S=https://127.0.0.1:$HTTPS_PORT
POLITE=http://127.0.0.1:$POLITE_PORT
CP=http://127.0.0.1:$CONNECT_PORT # the CONNECT recorder

# The test origins listen on random ports: allow CONNECT to them besides the
# defaults. politeness.max_queue_wait is scaled down with the polite
# origin's Crawl-delay (2 s): Crawl-delay 60 s against the default 30 s.
cat >"$WORK/robotsgate.yaml" <<EOF
listen: 127.0.0.1:0
audit: all
audit_log: $WORK/audit.jsonl
log_format: json
https:
  data_dir: $WORK/data
  allowed_ports: [80, 443, $HTTP_PORT, $HTTPS_PORT, $POLITE_PORT]
  upstream_roots: [$WORK/origin.pem]
politeness:
  max_queue_wait: 1s
EOF
"$WORK/robotsgate" -config "$WORK/robotsgate.yaml" 2>"$WORK/robotsgate.log" &
PIDS+=($!)
LISTEN=
for _ in $(seq 300); do
  LISTEN=$(sed -n 's/.*"listen":"\([0-9.]*:[0-9]*\)".*/\1/p' "$WORK/robotsgate.log" | head -n 1)
  [ -n "$LISTEN" ] && break
  sleep 0.1
done
[ -n "$LISTEN" ] || { echo "robotsgate did not start: $(cat "$WORK/robotsgate.log")" >&2; exit 1; }
P=http://$LISTEN
CA=$WORK/robotsgate-ca.pem
"$WORK/robotsgate" ca -config "$WORK/robotsgate.yaml" -pem >"$CA" || { echo "robotsgate ca -pem failed" >&2; exit 1; }
echo "== robotsgate on $LISTEN; origins: $H $S $POLITE (Crawl-delay 2)"
PROBE=/private/probe

# Proxy environment as the table gives it: lower-case (every client reads it).
PROXYENV=(env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u NO_PROXY -u no_proxy http_proxy="$P" https_proxy="$P")
NOPROXYENV=(env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy -u ALL_PROXY -u all_proxy)

. "$HERE/clients.sh"

# robotsgate's CA public-key hash, as `robotsgate ca` prints it, for
# Chromium's --ignore-certificate-errors-spki-list.
SPKI=$("$WORK/robotsgate" ca -config "$WORK/robotsgate.yaml" | sed -n 's/^  spki: *\([^ ]*\).*/\1/p')
[ -n "$SPKI" ] || fail "robotsgate ca printed no 'spki:' line"

# CLIENTS=... runs only those rows (e.g. CLIENTS="chromium headless").
for c in ${CLIENTS:-curl wget python scrapy go node crawlee chromium headless statuspage java scrapy_politeness}; do
  t=$SECONDS
  "run_$c"
  echo "      ($c: $((SECONDS - t)) s)"
done

echo "== the origins never served a disallowed URL"
for o in "$H" "$S" "$POLITE"; do
  n=$("${NOPROXYENV[@]}" SSL_CERT_FILE="$WORK/origin.pem" "$WORK/goclient" -body "$o/__hits" 2>&1)
  if [ "$n" = 0 ]; then echo "ok    $o served no /private page"; else fail "$o served /private pages: $n"; fi
done

echo
echo "User-Agent sent on CONNECT (- = none):"
printf '  %s\n' "${CONNECT_UAS[@]}"
for s in "${SKIPPED[@]}"; do
  case ${CLIENTS_REQUIRE:-},$s in
  all-but-java,java\ *) ;;
  all,* | all-but-java,*) fail "CLIENTS_REQUIRE=$CLIENTS_REQUIRE: $s was skipped" ;;
  esac
done
echo "ran:     ${RAN[*]:-none}"
echo "skipped: ${SKIPPED[*]:-none}"
echo "${#PASSED[@]} checks passed, ${#FAILED[@]} failed"
[ ${#FAILED[@]} -eq 0 ] || { printf 'failed: %s\n' "${FAILED[@]}" >&2; exit 1; }
