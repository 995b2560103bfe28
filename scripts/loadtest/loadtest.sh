#!/usr/bin/env bash
# Load test: robotsgate next to a bare goproxy forwarder (same goproxy version,
# same transport settings) and squid (caching off), in one run, on loopback only.
#
#   scripts/loadtest/loadtest.sh            # ~10 s per measured run, 64 connections
#   DUR=5s CONNS=32 scripts/loadtest/loadtest.sh
#   REPS=3 DUR=5s scripts/loadtest/loadtest.sh   # 3 interleaved runs each, then medians
#   CACHE=redis://127.0.0.1:6379/0 scripts/loadtest/loadtest.sh   # robotsgate on a running Redis
#   MITM=0 scripts/loadtest/loadtest.sh     # skip the HTTPS (MITM) part
#   TRANSPARENT=0 scripts/loadtest/loadtest.sh   # skip the transparent-listener rows
#   RG_BEFORE=/path/to/other/tree scripts/loadtest/loadtest.sh
#       # also measure the robotsgate built from another tree (rows robotsgate-before),
#       # in the same rounds, for before/after figures side by side
#
# Plain HTTP: wrk through robotsgate, a bare goproxy forwarder and squid.
# HTTPS: wrk cannot send CONNECT, so scripts/loadtest/mitmload (Go, keep-alive
# connections, MITM_CONNS workers) goes through robotsgate (MITM with its own
# CA) and a bare goproxy MITM (same goproxy, CA, leaf-certificate cache and
# transport) to HTTPS origins.
#
# Transparent listener (as root, with unshare, setpriv and iptables): the
# whole run happens in a network namespace of its own (the rules never touch
# the machine's), robotsgate runs as uid 65532, and for the transparent rows
# `robotsgate iptables -apply` redirects wrk's and mitmload's connections to
# the origin ports to robotsgate's transparent listener: wrk sends origin-form
# requests to the first origin itself, mitmload -direct connects to
# https://localhost:port itself. Same origins, same binary, same process as
# the forward-proxy rows.
#
# Needs wrk and (optionally) squid: apt-get install -y wrk squid; the
# transparent rows also need curl.
# Each proxy is pinned to CPU 0, wrk and the origin to CPU 1 (on a 2-core
# machine). CPU time per request is the proxy's user+sys time from
# /proc/PID/stat over the measured run, divided by the requests wrk completed.
# Every run is bounded by DUR; the whole script by `timeout`.
set -euo pipefail
cd "$(dirname "$0")/../.."

DUR=${DUR:-10s}
REPS=${REPS:-1}
CONNS=${CONNS:-64}
ORIGIN_BASE=${ORIGIN_BASE:-18000}
ORIGINS=16
TLS_BASE=${TLS_BASE:-18500}
MITM=${MITM:-1}
PLAIN=${PLAIN:-1} # PLAIN=0: the MITM rows only
MITM_CONNS=${MITM_CONNS:-16}
PROXY_CPU=${PROXY_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
TRANSPARENT=${TRANSPARENT:-1}
command -v wrk >/dev/null || { echo "loadtest: wrk not found (apt-get install -y wrk)" >&2; exit 2; }
if [ "$TRANSPARENT" = 1 ]; then
  for bin in unshare setpriv iptables-restore ip curl; do
    command -v "$bin" >/dev/null || { echo "loadtest: $bin not found, skipping the transparent rows" >&2; TRANSPARENT=0; }
  done
  [ "$(id -u)" = 0 ] || { echo "loadtest: not root, skipping the transparent rows" >&2; TRANSPARENT=0; }
fi
if [ "$TRANSPARENT" = 1 ] && [ -z "${LOADTEST_NETNS:-}" ]; then
  exec unshare --net env LOADTEST_NETNS=1 TRANSPARENT=1 bash "$PWD/scripts/loadtest/loadtest.sh" "$@"
fi
asrg=() # how robotsgate runs: as uid 65532 in the namespace, whose rules exclude it
if [ -n "${LOADTEST_NETNS:-}" ]; then
  ip link set lo up
  asrg=(setpriv --reuid 65532 --regid 65532 --clear-groups)
fi

work=$(mktemp -d)
chmod 777 "$work"
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP:-}" = 1 ]; then echo "loadtest: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "building..." >&2
go build -o "$work/robotsgate" ./cmd/robotsgate
if [ -n "${RG_BEFORE:-}" ]; then
  (cd "$RG_BEFORE" && go build -o "$work/robotsgate-before" ./cmd/robotsgate)
  echo "before: $(cd "$RG_BEFORE" && git rev-parse --short HEAD 2>/dev/null || echo "$RG_BEFORE")" >&2
fi
go build -o "$work/bareproxy" ./scripts/loadtest/bareproxy
go build -o "$work/origin" ./scripts/loadtest/origin
go build -o "$work/mitmload" ./scripts/loadtest/mitmload

taskset -c "$LOAD_CPU" "$work/origin" -base "$ORIGIN_BASE" -n "$ORIGINS" \
  -tls-base "$TLS_BASE" -tls-cert "$work/origin.pem" &
pids+=($!)

wait_port() { # host:port
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "loadtest: nothing listens on $1" >&2; return 1
}
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
clk=$(getconf CLK_TCK)

# Load generators: LOADER ADDR ALLOWED_ONLY DURATION, printing wrk's summary lines.
load_wrk() {
  ORIGIN_BASE=$ORIGIN_BASE ORIGINS=$ORIGINS ALLOWED_ONLY=$2 \
    timeout 60 taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$3" --latency -s scripts/loadtest/mixed.lua "http://$1/"
}
load_mitm() {
  local only=""; [ "$2" = 1 ] && only=-allowed-only
  timeout 60 taskset -c "$LOAD_CPU" "$work/mitmload" -proxy "http://$1" -ca "$work/data/robotsgate-ca-cert.pem" \
    -base "$TLS_BASE" -n "$ORIGINS" -c "$MITM_CONNS" -d "$3" $only
}
# The same, without a proxy: to the origins themselves, intercepted.
load_wrk_direct() {
  ORIGIN_BASE=$ORIGIN_BASE ORIGINS=1 ALLOWED_ONLY=$2 DIRECT=1 \
    timeout 60 taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNS" -d"$3" --latency -s scripts/loadtest/mixed.lua "http://$1/"
}
load_mitm_direct() {
  local only=""; [ "$2" = 1 ] && only=-allowed-only
  timeout 60 taskset -c "$LOAD_CPU" "$work/mitmload" -direct -ca "$work/data/robotsgate-ca-cert.pem" \
    -base "$TLS_BASE" -n "$ORIGINS" -c "$MITM_CONNS" -d "$3" $only
}

# run LOADER NAME PID ADDR ALLOWED_ONLY: warm up, then measure one run.
run() {
  local loader=$1; shift
  local name=$1 pid=$2 addr=$3 allowed_only=$4
  "$loader" "$addr" "$allowed_only" 2s >/dev/null
  local t0; t0=$(ticks "$pid")
  local out
  out=$("$loader" "$addr" "$allowed_only" "$DUR")
  local t1; t1=$(ticks "$pid")
  local rps reqs p99 non2xx
  rps=$(awk '/^Requests\/sec/ {print $2}' <<<"$out")
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  local cpu_us
  cpu_us=$(awk -v d=$((t1 - t0)) -v n="$reqs" -v c="$clk" 'BEGIN { if (n > 0) printf "%.1f", d / c * 1e6 / n; else print "n/a" }')
  printf '%-22s %-9s %10s req/s  p99 %-9s  cpu/req %7s us  non-2xx %s\n' \
    "$name" "$([ "$allowed_only" = 1 ] && echo allowed || echo mixed)" "$rps" "$p99" "$cpu_us" "${non2xx:-0}" |
    tee -a "$work/results"
}

wait_port "127.0.0.1:$TLS_BASE" # the origin's certificate file exists from here on
tls_ports=$(seq -s, "$TLS_BASE" $((TLS_BASE + ORIGINS - 1)))

# robotsgate: enforce mode, audit of blocked requests to a file, MITM for
# HTTPS with its CA in $work/data, trusting the origin's certificate.
taskset -c "$PROXY_CPU" "${asrg[@]}" "$work/robotsgate" serve -listen 127.0.0.1:19309 -audit-log "$work/audit.log" \
  ${LOADTEST_NETNS:+-transparent-listen 127.0.0.1:19315} \
  -log-level warn -data-dir "$work/data" -upstream-roots "$work/origin.pem" -allowed-ports "$tls_ports" \
  ${CACHE:+-cache "$CACHE"} >"$work/robotsgate.out" 2>&1 &
rg=$!; pids+=("$rg")
rgb=""
if [ -n "${RG_BEFORE:-}" ]; then
  wait_port 127.0.0.1:19309 # the CA exists from here on: both share it
  taskset -c "$PROXY_CPU" "${asrg[@]}" "$work/robotsgate-before" serve -listen 127.0.0.1:19319 \
    -audit-log "$work/audit-before.log" -log-level warn -data-dir "$work/data" \
    -upstream-roots "$work/origin.pem" -allowed-ports "$tls_ports" \
    ${CACHE:+-cache "$CACHE"} >"$work/robotsgate-before.out" 2>&1 &
  rgb=$!; pids+=("$rgb")
  wait_port 127.0.0.1:19319 || rgb=""
fi
taskset -c "$PROXY_CPU" "$work/bareproxy" -listen 127.0.0.1:19310 &
bare=$!; pids+=("$bare")
wait_port 127.0.0.1:19309
wait_port 127.0.0.1:19310
# The bare MITM proxy loads the CA robotsgate created.
taskset -c "$PROXY_CPU" "$work/bareproxy" -listen 127.0.0.1:19312 -mitm -data-dir "$work/data" \
  -upstream-roots "$work/origin.pem" &
bare_mitm=$!; pids+=("$bare_mitm")
wait_port 127.0.0.1:19312

squid_pid=""
if command -v squid >/dev/null; then
  sed -e "s|@PORT@|19311|" -e "s|@DIR@|$work|" scripts/loadtest/squid.conf.in >"$work/squid.conf"
  taskset -c "$PROXY_CPU" squid -N -f "$work/squid.conf" >"$work/squid.out" 2>&1 &
  squid_pid=$!; pids+=("$squid_pid")
  wait_port 127.0.0.1:19311 || squid_pid=""
else
  echo "loadtest: squid not found, skipping it (apt-get install -y squid)" >&2
fi

echo "conns=$CONNS duration=$DUR origins=$ORIGINS proxy-cpu=$PROXY_CPU load-cpu=$LOAD_CPU"
# With REPS > 1 the proxies take turns, REPS rounds per mix, so that a
# slow spell of a shared machine hits all of them alike; the medians follow.
# The transparent rows run right after the forward-proxy row of the same
# round, with the redirect rules in place for them only (other proxies'
# connections to the origins must not be redirected).
rules() { # apply | remove
  [ -n "${LOADTEST_NETNS:-}" ] || return 0
  "$work/robotsgate" iptables "-$1" -uid 65532 -to-port 19315 -ipv6=false \
    -ports "$ORIGIN_BASE:$((ORIGIN_BASE + ORIGINS - 1)),$TLS_BASE:$((TLS_BASE + ORIGINS - 1))" >/dev/null
}
transparent() { # LOADER NAME MIX
  [ -n "${LOADTEST_NETNS:-}" ] || return 0
  rules apply
  intercepted || { rules remove; return 1; }
  run "$1" "$2" "$rg" "127.0.0.1:$ORIGIN_BASE" "$3"
  intercepted || { rules remove; return 1; }
  rules remove
}
# intercepted checks that a disallowed URL requested of the origin itself
# is answered by robotsgate (403), not by the origin: a row of requests
# that went around robotsgate would measure nothing.
intercepted() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$ORIGIN_BASE/private/secret") || true
  [ "$code" = 403 ] || { echo "loadtest: the redirect did not reach robotsgate (status $code)" >&2; return 1; }
}
for mix in 0 1; do
  [ "$PLAIN" != 0 ] || break
  for _ in $(seq 1 "$REPS"); do
    run load_wrk robotsgate "$rg" 127.0.0.1:19309 $mix
    if [ -n "$rgb" ]; then run load_wrk robotsgate-before "$rgb" 127.0.0.1:19319 $mix; fi
    transparent load_wrk_direct robotsgate-transp $mix
    run load_wrk bare-goproxy "$bare" 127.0.0.1:19310 $mix
    if [ -n "$squid_pid" ]; then run load_wrk squid "$squid_pid" 127.0.0.1:19311 $mix; fi
  done
done
if [ "$MITM" != 0 ]; then
  echo "HTTPS through MITM: $MITM_CONNS keep-alive workers (scripts/loadtest/mitmload)"
  for mix in 0 1; do
    for _ in $(seq 1 "$REPS"); do
      run load_mitm robotsgate-mitm "$rg" 127.0.0.1:19309 $mix
      if [ -n "$rgb" ]; then run load_mitm robotsgate-before-mitm "$rgb" 127.0.0.1:19319 $mix; fi
      transparent load_mitm_direct robotsgate-transp-mitm $mix
      run load_mitm bare-goproxy-mitm "$bare_mitm" 127.0.0.1:19312 $mix
    done
  done
fi
if [ "$REPS" -gt 1 ]; then
  echo "medians of $REPS runs (p99 in ms):"
  # Fields: name mix rps "req/s" "p99" p99 "cpu/req" cpu "us" ...
  awk '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    function median(list,   a, n, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { k = $1 " " $2; if (!(k in rps)) order[++nk] = k; rps[k] = rps[k] " " $3; p99[k] = p99[k] " " ms($6); cpu[k] = cpu[k] " " $8 }
    END { for (i = 1; i <= nk; i++) { k = order[i]; split(k, f, " ")
      printf "%-22s %-9s %10.2f req/s  p99 %7.2fms  cpu/req %7.1f us\n", f[1], f[2], median(rps[k]), median(p99[k]), median(cpu[k]) } }
  ' "$work/results"
fi
echo "audit records written: $(wc -l <"$work/audit.log")"
