#!/usr/bin/env bash
# bench-nodes.sh — bbserver across 2 emulated nodes against the transport's
# own ceiling, measured in the same run.
#
#   bbserver/bench-nodes.sh [BUILDDIR] [SECONDS]    (make bench-server)
#
# A bbserver on node0 serves bbs-bench's clients on node1 (1, 4 and 8
# clients, one range per message, then 4 clients with 64), alternating with
# ucx_perftest between the same two nodes over the same TCP transport: its
# one-way active-message rate (ucp_am_bw, 64 bytes, both sides polling) is
# the most messages per second this network carries.  A bbserver round trip
# is two messages (request and reply), so the line "vs UCX" divides twice
# bbserver's round trips per second by that rate: 1.0 would be a server
# that costs nothing.  Both emulated nodes share this machine's cores, so
# each line also says how busy all of them were during the run and the CPU
# time (all processes, user and kernel) one round trip cost: near 100 %
# busy, the machine, not the server's waiting, sets the rate.  Two series;
# tests/cluster/cluster.sh makes the nodes.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$here}" && pwd)
secs=${2:-3}
cluster=$here/tests/cluster/cluster.sh
bench=$build/bbserver/bbs-bench
server=$build/bbserver/bbserver
perftest=$(command -v ucx_perftest || true)

[ -x "$bench" ] && [ -x "$server" ] || { echo "bench-nodes: build first (make): $bench, $server" >&2; exit 1; }
[ -n "$perftest" ] || { echo "bench-nodes: ucx_perftest is missing (Debian package ucx-utils; tools/install-deps.sh installs it)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench-nodes: the emulated nodes need root (unshare, ip)" >&2; exit 1; }

if [ "${BENCH_NODES_INSIDE:-}" != 1 ]; then
    dir=$(mktemp -d /tmp/bbfs-bench-nodes.XXXXXX)
    trap 'rm -rf "$dir"' EXIT
    BENCH_NODES_INSIDE=1 "$cluster" with 2 "$dir/c" "$0" "$build" "$secs"
    exit
fi

C=$CLUSTER_DIR
on() { local node=$1; shift; "$cluster" exec "$C" "$node" "$@"; }
mkdir -p "$C/tok"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$C/tok/token"
chmod 600 "$C/tok/token"

# ucx_perftest's 64-byte one-way message rate, node1 -> node0 (messages/s)
ucx_rate() {
    on node0 sh -c "UCX_TLS=tcp '$perftest' -p 13337 >/dev/null 2>&1 &"
    sleep 0.5
    on node1 env UCX_TLS=tcp "$perftest" 10.77.0.10 -p 13337 -t ucp_am_bw -s 64 -n 200000 2>&1 |
        awk '/^Final:/ { print int($NF) }'
    sleep 0.3
}

# the machine's busy and total CPU ticks so far (all cores, all namespaces)
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
hz=$(getconf CLK_TCK)

on node0 sh -c "'$server' -l 10.77.0.10 -p 7792 -d '$C/local' -t '$C/tok/token' >'$C/server.out' 2>&1 &"
sleep 1
echo "bbserver on node0, clients on node1 (UCX over TCP between emulated nodes), ${secs} s per run"
for series in 1 2; do
    rate=$(ucx_rate)
    echo "series $series: UCX one-way 64-byte active messages, both sides polling: $rate messages/s"
    for cb in "1 1" "4 1" "8 1" "4 64"; do
        set -- $cb
        before=$(cpu_ticks)
        out=$(on node1 "$bench" -S 10.77.0.10:7792 -t "$C/tok/token" -c "$1" -b "$2" -s "$secs")
        after=$(cpu_ticks)
        line=$(echo "$out" | grep '^attach')
        trips=$(echo "$out" | awk '/^total/ { print $2 }')
        msgs=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) messages\/s.*/\1/p')
        # (the ticks include the clients' start and exit)
        awk -v l="$line" -v m="$msgs" -v r="$rate" -v b="$before" -v a="$after" -v hz="$hz" \
            -v n="$trips" 'BEGIN {
                split(b, x, " "); split(a, y, " "); busy = y[1] - x[1]; all = y[2] - x[2]
                printf "%s   vs UCX: %.2f   cores busy: %.0f %%   CPU per round trip: %.1f us\n",
                       l, 2 * m / r, (all > 0 ? 100 * busy / all : 0),
                       (n > 0 ? 1e6 * busy / hz / n : 0) }' 
    done
done
on node0 pkill -f "$server -l 10.77.0.10" || true
