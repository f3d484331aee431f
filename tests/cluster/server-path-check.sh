#!/usr/bin/env bash
# server-path-check.sh — visibility through bbserver (ad_bbfs_server.c):
# processes attach their synced writes to the file's ownership map, query
# it, and read others' bytes from the owners' logs.
#   1. One node, forced (BBFS_FORCE_REMOTE=1): the consistency and
#      ordering tests, every read of another writer's bytes through the
#      node's server; each file equals a ufs: run's.  The server the driver
#      started was asked to attach, query and read (its counters), and holds
#      no file once the replays are done.
#   2. Two emulated nodes, each with its own log directory (no process can
#      open another node's logs): the MSC tests (t_consistency: the four
#      synchronization constructs, writer and reader on different nodes),
#      epochs, vectors and collective order; each file equals a ufs: run's,
#      and node1's server served reads of its logs.  (t_handle_order is
#      not here yet: its last close is a one-process handle that must
#      replay logs on the other node, which replay cannot reach yet.)
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/cluster.sh"
runner="$here/../../mpiio-tests/run-mpiio-test.sh"
specs="$here/../../mpiio-tests"
work="$BUILDDIR/tests/cluster/server-path"
ctl="$BUILDDIR/bbserver/bbsctl"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
[ -x "$ctl" ] || { echo "FAIL: $ctl is missing (make check builds it)"; exit 1; }
[ -x "$BUILDDIR/mpich/bin/bbserver" ] || { echo "FAIL: no bbserver beside libmpi ($BUILDDIR/mpich/bin/bbserver; make mpich links it)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
count() { echo "$1" | sed -n "s/.* $2 \([0-9]*\).*/\1/p"; }   # count PING_LINE OP

# 1. one node, forced
for s in t_consistency t_epochs t_vector t_views t_collorder t_handle_order t_nonblocking; do
    if BBFS_FORCE_REMOTE=1 BBFS_TEST_WORK_SUFFIX=-remote BBFS_TEST_LOGDIR="$work/logs" \
        "$runner" "$specs/$s.mpi" > "$work/$s.out" 2>&1; then
        ok "one node, forced remote: $s equals ufs:"
    else fail "one node, forced remote: $s (see $work/$s.out)"; sed 's/^/  | /' "$work/$s.out" | tail -5; fi
done
addr=$(cat "$work/logs"/.bbserver.*.addr 2>/dev/null | head -1)
p=$("$ctl" -S "$addr" ping 2>&1)
echo "server: $p"
if [ "$(count "$p" attach)" -gt 0 ] 2>/dev/null && [ "$(count "$p" query)" -gt 0 ] \
   && [ "$(count "$p" read)" -gt 0 ]; then
    ok "the driver's server attached, queried and served reads"
else fail "server counters: $p"; fi
[ "$(count "$p" files)" = 0 ] && ok "and holds no file after the replays" || fail "files held: $p"
pid=$(echo "$p" | sed -n 's/.* pid \([0-9]*\).*/\1/p')
[ -n "$pid" ] && kill "$pid" 2>/dev/null

# 2. two nodes, node-local logs
"$cluster" with 2 "$work/c" env work="$work" runner="$runner" specs="$specs" ctl="$ctl" \
    cluster="$cluster" MPIEXEC_HOST="$MPIEXEC" bash -c '
set -u
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
for s in t_consistency t_epochs t_vector t_collorder; do
    if MPIEXEC=$CLUSTER_DIR/mpiexec BBFS_TEST_WORK_SUFFIX=-nodes BBFS_TEST_LOGDIR=$CLUSTER_DIR/local \
        "$runner" "$specs/$s.mpi" > "$work/n-$s.out" 2>&1; then
        ok "2 nodes, node-local logs: $s equals ufs:"
    else fail "2 nodes, node-local logs: $s (see $work/n-$s.out)"; sed "s/^/  | /" "$work/n-$s.out" | tail -5; fi
done
addr=$("$cluster" exec "$CLUSTER_DIR" node1 sh -c "cat $CLUSTER_DIR/local/.bbserver.node1.addr")
p=$("$cluster" exec "$CLUSTER_DIR" node0 "$ctl" -S "$addr" ping 2>&1)
echo "node1 server: $p"
reads=$(echo "$p" | sed -n "s/.* read \([0-9]*\).*/\1/p")
[ "${reads:-0}" -gt 0 ] && ok "node1 s server served $reads reads of its logs to node0" \
    || fail "node1 s server: $p"
exit $((fails > 0))
' || fails=$((fails+1))
[ $fails = 0 ] && rm -rf "$work"
exit $((fails > 0))
