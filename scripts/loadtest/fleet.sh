#!/usr/bin/env bash
# Fleet load test: two robotsgate replicas sharing one Redis, first on a
# standalone redis-server, then on a 3-primary Redis Cluster, with the same
# load: N origins served by scripts/loadtest/fleetload on loopback (odd ones
# with a Crawl-delay of DELAY seconds), C concurrent requests round-robin over
# the two replicas. fleetload prints requests/s, Redis commands and Redis CPU per request
# for a first visit, a cached request without and with Crawl-delay, then a
# mixed run of DUR. Loopback only; every phase is bounded in requests and time,
# the whole script by `timeout`.
#
#   scripts/loadtest/fleet.sh                 # 1 000 origins, 64 connections, 10 s mixed run
#   N=200 DUR=5s scripts/loadtest/fleet.sh
#
# Needs redis-server and redis-cli (Debian: apt-get install -y redis-server).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${N:-1000}
C=${C:-64}
DUR=${DUR:-10s}
DELAY=${DELAY:-0.5}
BASE=${BASE:-16400}
if [ -z "${FLEET_TIMEOUT_SET:-}" ]; then
  exec timeout 900 env FLEET_TIMEOUT_SET=1 "$0" "$@"
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
for b in redis-server redis-cli; do
  command -v "$b" >/dev/null || { echo "fleet: $b not found (apt-get install -y redis-server)" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
echo "building..." >&2
go build -o "$work/robotsgate" ./cmd/robotsgate
go build -o "$work/fleetload" ./scripts/loadtest/fleetload

redis() { # port [extra args…]: a throw-away redis-server
  local port=$1; shift
  mkdir -p "$work/r$port"
  (cd "$work/r$port" && exec redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no "$@" >redis.log 2>&1) &
  pids+=($!)
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.05; done
  echo "fleet: redis on $port did not start" >&2; exit 1
}

run() { # label cache-URL redis-nodes
  local label=$1 cache=$2 nodes=$3 rp=()
  echo "== $label ($cache)"
  for i in 1 2; do
    "$work/robotsgate" -listen "127.0.0.1:$((BASE + 80 + i))" -cache "$cache" -audit-log "$work/audit$i.log" \
      -data-dir "$work/d$label$i" -log-level warn 2>>"$work/rg$i.log" &
    rp+=($!); pids+=($!)
  done
  for i in 1 2; do
    for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$((BASE + 80 + i))) 2>/dev/null && break; sleep 0.05; done
  done
  "$work/fleetload" -proxies "127.0.0.1:$((BASE + 81)),127.0.0.1:$((BASE + 82))" -redis "$nodes" \
    -n "$N" -c "$C" -dur "$DUR" -delay "$DELAY"
  for i in "${rp[@]}"; do kill "$i"; wait "$i" 2>/dev/null || true; done
}

redis $((BASE + 1))
run standalone "redis://127.0.0.1:$((BASE + 1))/0" "127.0.0.1:$((BASE + 1))"
echo "Redis memory: $(redis-cli -p $((BASE + 1)) info memory | grep -E '^used_memory:' | tr -d '\r')"

nodes=()
for i in 2 3 4; do
  p=$((BASE + 10 + i))
  redis "$p" --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000
  nodes+=("127.0.0.1:$p")
done
redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$work/create.log" 2>&1
for _ in $(seq 200); do
  ok=1
  for n in "${nodes[@]}"; do redis-cli -h 127.0.0.1 -p "${n#*:}" cluster info | grep -q cluster_state:ok || ok=0; done
  [ "$ok" = 1 ] && break; sleep 0.05
done
list=$(IFS=,; echo "${nodes[*]}")
run cluster "redis-cluster://$list" "$list"
