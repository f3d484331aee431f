#!/usr/bin/env bash
# nodelocal-check.sh — replay across emulated nodes whose logs live on each
# node's own storage (BBFS_LOGDIR is the node-local tmpfs, cluster.sh), where
# no process can open another node's logs: writers' hosts send metalogs and
# data over MPI (ad_bbfs_exchange.c).
#   1. 4 processes on 2 nodes write four epochs of noncontiguous calls
#      (t_crashpoints) and the close replays them: the file equals a ufs:
#      run's, and no log is left on either node.
#   2. The same with bbfs_replay=never: logs stay on both nodes, then
#      bbfs-replay with 3 processes across the two nodes replays them.
#   3. A writer killed after its second sync: bbfs-replay across the nodes
#      recovers every block a completed sync covered.
#   4. bbfs-replay on a third node that holds none of the logs refuses with
#      a message that says where to run it, and keeps the logs; on the
#      writers' nodes it then succeeds.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/cluster.sh"
work="$BUILDDIR/tests/cluster/nodelocal"
prog="$BUILDDIR/mpiio-tests/t_crashpoints"
tool="$BUILDDIR/tools/bbfs-replay"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
for f in "$prog" "$tool"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make check builds it)"; exit 1; }
done
rm -rf "$work"; mkdir -p "$work"
export MPIEXEC

"$cluster" with 3 "$work/c" env work="$work" prog="$prog" tool="$tool" bash -c '
set -u
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
mpx() { CLUSTER_HOSTS=$hosts "$CLUSTER_DIR/mpiexec" "$@" </dev/null; }
logs_on() { "'"$cluster"'" exec "$CLUSTER_DIR" "$1" sh -c "ls $CLUSTER_DIR/local | grep -c log$" ; }
export BBFS_LOGDIR=$CLUSTER_DIR/local
hosts=node0,node1

mpx -n 4 "$prog" "ufs:$work/ref.dat" > "$work/ref.out" 2>&1 || { cat "$work/ref.out"; exit 1; }

# 1. replay at close
if mpx -n 4 "$prog" "bbfs:$work/close.dat" > "$work/close.out" 2>&1 \
   && cmp -s "$work/ref.dat" "$work/close.dat"; then ok "replay at close across 2 nodes equals ufs:"
else sed "s/^/  | /" "$work/close.out" | tail -15; fail "replay at close across 2 nodes"; fi
[ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ] && ok "no log left on either node" \
    || fail "logs left after the close: node0 $(logs_on node0), node1 $(logs_on node1)"

# 2. deferred, then bbfs-replay across both nodes
printf "bbfs_replay never\n" > "$work/never.hints"
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/later.dat" > "$work/later.out" 2>&1 \
    || { sed "s/^/  | /" "$work/later.out" | tail -15; fail "the deferred writer"; }
[ "$(logs_on node0)" -gt 0 ] && [ "$(logs_on node1)" -gt 0 ] && ok "deferred logs stay on both nodes" \
    || fail "deferred logs: node0 $(logs_on node0), node1 $(logs_on node1)"
if mpx -n 3 "$tool" --quiet "$work/later.dat" > "$work/later-replay.out" 2>&1 \
   && cmp -s "$work/ref.dat" "$work/later.dat"; then ok "bbfs-replay with 3 processes on the 2 nodes equals ufs:"
else sed "s/^/  | /" "$work/later-replay.out" | tail -15; fail "bbfs-replay across the nodes"; fi
[ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ] && ok "bbfs-replay removed the logs on both nodes" \
    || fail "logs left after bbfs-replay: node0 $(logs_on node0), node1 $(logs_on node1)"

# 3. a writer killed after its second sync
BBFS_FAULT="sync-sealed#2:kill" BBFS_FAULT_RANK=1 mpx -n 4 "$prog" "bbfs:$work/crash.dat" \
    > "$work/crash.out" 2>&1 && fail "the writer was not killed"
if mpx -n 2 "$tool" --quiet "$work/crash.dat" > "$work/crash-replay.out" 2>&1 \
   && "$prog" --verify "$work/crash.dat" > "$work/crash-verify.out" 2>&1; then
    ok "after a kill, bbfs-replay across the nodes recovers what syncs covered ($(sed -n "s/.*(\(.*\) by process).*/\1/p" "$work/crash-verify.out") epochs by process)"
else sed "s/^/  | /" "$work/crash-replay.out" "$work/crash-verify.out" | tail -15; fail "recovery after a kill"; fi

# 4. from a node without the logs
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/far.dat" > "$work/far.out" 2>&1 \
    || fail "the deferred writer (4)"
hosts=node2
mpx -n 2 "$tool" --quiet "$work/far.dat" > "$work/far-replay.out" 2>&1; rc=$?
[ $rc = 1 ] && grep -q "no process of this job can read the log" "$work/far-replay.out" \
    && ok "bbfs-replay on a node without the logs refuses and says where to run it" \
    || { sed "s/^/  | /" "$work/far-replay.out" | tail -8; fail "bbfs-replay without the logs: exit $rc"; }
[ "$(logs_on node0)" -gt 0 ] && [ "$(logs_on node1)" -gt 0 ] && ok "the refused replay kept the logs" \
    || fail "logs after a refused replay: node0 $(logs_on node0), node1 $(logs_on node1)"
hosts=node0,node1,node2
if mpx -n 3 "$tool" --quiet "$work/far.dat" > "$work/far-replay2.out" 2>&1 \
   && cmp -s "$work/ref.dat" "$work/far.dat"; then ok "then bbfs-replay with the writers nodes included succeeds"
else sed "s/^/  | /" "$work/far-replay2.out" | tail -10; fail "bbfs-replay with the writers nodes"; fi
exit $((fails > 0))'
rc=$?
[ $rc = 0 ] && rm -rf "$work"
exit $rc
