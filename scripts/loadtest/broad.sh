#!/usr/bin/env bash
# Broad-crawl load test: N origins, each on its own loopback address
# (127.a.b.c:18080), each serving a robots.txt drawn from the realistic mix
# (internal/robotsmix: median ~320 B, p90 ~4 KB, p99 ~28 KB, ~1 in 6 with a
# Crawl-delay), PER requests per origin (1 in 25 URLs disallowed), through a
# bare goproxy forwarder and then through robotsgate with default settings,
# in one run.
#
#   scripts/loadtest/broad.sh                  # 10 000 origins
#   N=50000 scripts/loadtest/broad.sh
#   RG_SRC=/path/to/other/tree N=10000 scripts/loadtest/broad.sh   # measure another robotsgate
#
# It prints, for each proxy, new origins per second and the p50/p99 latency of
# the first request to an origin under that load; then, with the proxy
# otherwise idle, the first-request latency of LAT_N more new origins sent
# one at a time (what robotsgate adds to a first request, without the queue
# of C workers on one CPU), beside a direct robots.txt fetch; for robotsgate also the live heap (from
# GODEBUG=gctrace, at its last collection) and RSS per cached origin, the
# goroutines and idle upstream connections after the run and WAIT_IDLE
# seconds later, and the cache's entries, charged bytes and evictions.
#
# Loopback only: the script re-executes itself in a network namespace of its
# own (unshare -n, needs root) whose only interface is lo; the origin server
# listens on 0.0.0.0 there and answers only on loopback addresses. Every run
# is bounded: the loader by TIMEOUT, the whole script by `timeout`.
set -euo pipefail
cd "$(dirname "$0")/../.."

N=${N:-10000}
PER=${PER:-1}
C=${C:-64}
LAT_N=${LAT_N:-1000}
WAIT_IDLE=${WAIT_IDLE:-8}
TIMEOUT=${TIMEOUT:-300s}
RG_SRC=${RG_SRC:-.}
PROXY_CPU=${PROXY_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}

[[ "$TIMEOUT" =~ ^[0-9]+s$ ]] || { echo "broad: TIMEOUT is a number of seconds, e.g. 300s" >&2; exit 2; }
if [ -z "${BROAD_IN_NETNS:-}" ]; then
  [ "$(id -u)" = 0 ] || { echo "broad: needs root for its network namespace (unshare -n)" >&2; exit 2; }
  # The whole script: two load runs of at most TIMEOUT each, the
  # one-at-a-time runs and the builds.
  secs=${TIMEOUT%s}
  exec timeout $((2 * secs + 600)) unshare -n env BROAD_IN_NETNS=1 "$0" "$@"
fi
ip link set lo up
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP:-}" = 1 ]; then echo "broad: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

echo "building..." >&2
(cd "$RG_SRC" && go build -o "$work/robotsgate" ./cmd/robotsgate)
go build -o "$work/bareproxy" ./scripts/loadtest/bareproxy
go build -o "$work/broadorigin" ./scripts/loadtest/broadorigin
go build -o "$work/broadload" ./scripts/loadtest/broadload

wait_port() { # host:port
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "broad: nothing listens on $1" >&2; return 1
}
metric() { # name: its value in robotsgate's /metrics, or n/a
  curl -s --max-time 5 "http://127.0.0.1:19309/metrics" | awk -v m="$1" '$1==m {print $2; f=1} END {if (!f) print "n/a"}'
}
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
clk=$(getconf CLK_TCK)
load() { # proxy-url extra-args...
  local p=$1; shift
  taskset -c "$LOAD_CPU" "$work/broadload" -proxy "$p" -n "$N" -per "$PER" -c "$C" -timeout "$TIMEOUT" "$@"
}

taskset -c "$LOAD_CPU" "$work/broadorigin" -listen 0.0.0.0:18080 &
pids+=($!)
wait_port 127.0.0.1:18080

echo "bare goproxy..." >&2
taskset -c "$PROXY_CPU" "$work/bareproxy" -listen 127.0.0.1:19310 &
bare=$!
pids+=($bare)
wait_port 127.0.0.1:19310
t0=$(ticks "$bare")
bare_out=$(load http://127.0.0.1:19310)
bare_cpu=$(( ($(ticks "$bare") - t0) * 1000000 / clk ))
bare_lat=$(taskset -c "$LOAD_CPU" "$work/broadload" -proxy http://127.0.0.1:19310 -n "$LAT_N" -first "$N" -c 1 -timeout "$TIMEOUT")
kill "$bare"; wait "$bare" 2>/dev/null || true

echo "robotsgate..." >&2
GODEBUG=gctrace=1 taskset -c "$PROXY_CPU" "$work/robotsgate" -listen 127.0.0.1:19309 \
  -audit-log "$work/audit.jsonl" -log-level warn 2>"$work/robotsgate.err" &
rg=$!
pids+=($rg)
wait_port 127.0.0.1:19309
g0=$(metric go_goroutines)
h0=$(metric go_memstats_heap_alloc_bytes)
rss0=$(rss_kb "$rg")
t0=$(ticks "$rg")
rg_out=$(load http://127.0.0.1:19309 -direct 200)
rg_cpu=$(( ($(ticks "$rg") - t0) * 1000000 / clk ))
rg_lat=$(taskset -c "$LOAD_CPU" "$work/broadload" -proxy http://127.0.0.1:19309 -n "$LAT_N" -first "$N" -c 1 \
  -timeout "$TIMEOUT" -direct "$LAT_N")
g1=$(metric go_goroutines)
idle1=$(metric robotsgate_upstream_idle_connections)
entries=$(metric robotsgate_robots_cache_entries)
charged=$(metric robotsgate_robots_cache_bytes)
evicted=$(metric robotsgate_robots_cache_evictions_total)
rss1=$(rss_kb "$rg")
live=$(grep -o '[0-9]*->[0-9]*->[0-9]* MB' "$work/robotsgate.err" | tail -1 | awk -F'->' '{print $3+0}')
sleep "$WAIT_IDLE"
g2=$(metric go_goroutines)
idle2=$(metric robotsgate_upstream_idle_connections)
rss2=$(rss_kb "$rg")

get() { echo "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1==k {print $2}'; }
echo "commit $(cd "$RG_SRC" && git rev-parse --short HEAD 2>/dev/null || echo "${RG_LABEL:-$RG_SRC}") | $(nproc) CPUs | N=$N PER=$PER C=$C"
printf '%-32s %14s %14s\n' "" "bare goproxy" "robotsgate"
for k in origins_per_s first_p50_ms first_p99_ms ok blocked other errors; do
  printf '%-32s %14s %14s\n' "$k" "$(get "$bare_out" $k)" "$(get "$rg_out" $k)"
done
printf '%-32s %14s %14s\n' "CPU µs per origin" "$((bare_cpu / N))" "$((rg_cpu / N))"
echo "direct robots.txt fetch p50 (ms): $(get "$(echo "$rg_out" | tail -1)" direct_robots_p50_ms)"
lb=$(get "$(echo "$bare_lat" | head -1)" first_p50_ms); lr=$(get "$(echo "$rg_lat" | head -1)" first_p50_ms)
ld=$(get "$(echo "$rg_lat" | tail -1)" direct_robots_p50_ms)
echo "one at a time, $LAT_N new origins: first request p50 (ms) bare $lb, robotsgate $lr (p99 bare $(get "$(echo "$bare_lat" | head -1)" first_p99_ms), robotsgate $(get "$(echo "$rg_lat" | head -1)" first_p99_ms))"
awk -v b="$lb" -v r="$lr" -v d="$ld" 'BEGIN { printf "added to a first request at p50: %.3f ms (direct robots.txt fetch p50 %.3f ms; bound: that + 1 ms = %.3f ms)\n", r-b, d, d+1 }'
echo "cache entries: $entries  charged bytes: $charged  evictions: $evicted"
if [ "$entries" != n/a ] && [ "$entries" -gt 0 ]; then
  awk -v live="$live" -v h0="$h0" -v n="$entries" -v r0="$rss0" -v r1="$rss1" 'BEGIN {
    printf "heap per cached origin (live at last GC): %.0f B\n", (live*1048576 - h0)/n
    printf "RSS per cached origin: %.0f B  (RSS %d MB -> %d MB)\n", (r1-r0)*1024/n, r0/1024, r1/1024 }'
fi
echo "live heap at last GC: ${live} MB"
echo "goroutines: start $g0, after the run $g1, ${WAIT_IDLE}s later $g2"
echo "idle upstream connections: after the run $idle1, ${WAIT_IDLE}s later $idle2; RSS then $((rss2/1024)) MB"
