#!/usr/bin/env bash
# nodelocal-check.sh — replay across emulated nodes whose logs live on each
# node's own storage (BBFS_LOGDIR is the node-local tmpfs, cluster.sh), where
# no process can open another node's logs: writers' hosts send metalogs and
# data over MPI (ad_bbfs_exchange.c).
#   1. 4 processes on 2 nodes write four epochs of noncontiguous calls
#      (t_crashpoints) and the close replays them: the file equals a ufs:
#      run's, and no log is left on either node.
#      Its counts: only the other node's bytes go over MPI; a process
#      reads what it needs of its own node's logs itself.
#   2. The same with bbfs_replay=never: logs stay on both nodes, then
#      bbfs-replay with 3 processes across the two nodes replays them.
#   3. A writer killed after its second sync: bbfs-replay across the nodes
#      recovers every block a completed sync covered.
#   4. bbfs-replay on a third node that holds none of the logs gets them
#      through the bbservers of the writers' nodes (which the manifest
#      names), and those servers remove them after the replay.
#   5. A later job on the third node opens a deferred file read-only: the
#      open replays it the same way, and every byte equals a ufs: run's.
#   6. The writers' servers killed: bbfs-replay on the third node fails
#      with a message naming the server and keeps every log; restarted
#      (as a job script would, on the address file's port), it succeeds.
#   7. MPI_File_delete on the third node removes the file's pending logs on
#      the writers' nodes, through their servers.
#   8. One writers' node lost (its server killed): bbfs-replay --salvage on
#      the other node replays that node's writers, names the lost ones with
#      their node and the epochs they had synced, and says which logs it
#      left behind; without --salvage it fails.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/cluster.sh"
work="$BUILDDIR/tests/cluster/nodelocal"
prog="$BUILDDIR/mpiio-tests/t_crashpoints"
tool="$BUILDDIR/tools/bbfs-replay"
readback="$BUILDDIR/tests/cluster/t_readback"
ctl="$BUILDDIR/bbserver/bbsctl"
server="$BUILDDIR/mpich/bin/bbserver"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
for f in "$prog" "$tool" "$readback" "$ctl" "$server"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make check builds it)"; exit 1; }
done
rm -rf "$work"; mkdir -p "$work"
export MPIEXEC BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120

"$cluster" with 3 "$work/c" env work="$work" prog="$prog" tool="$tool" readback="$readback" \
    ctl="$ctl" server="$server" bash -c '
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

# 1b. what crosses the network: 4 processes of 2 nodes write 1 MiB
# interleaved (noncontig, one round); each domain (a quarter) gets half of
# its bytes from the other node (512 KiB sent over MPI in all, from 2
# hosts each: 8 ranges asked) and a quarter from the other process of its
# own node, which it reads from that log itself (256 KiB)
if mpx -n 4 "'"$BUILDDIR"'/noncontig/noncontig" -dir "$work" -elmtsize 8 -mib 1 -repeat 1 \
       -warm 4 -breakdown yes > "$work/counts.out" 2>&1 \
   && [ "$(grep -c "^bbfs counts .*: 1 epochs in 1 exchange rounds, .* 8 datalog ranges asked of other processes and 524288 bytes sent to them, 262144 bytes read from the logs directly" "$work/counts.out")" = 2 ]
then ok "replay across 2 nodes: only the other node'"'"'s bytes go over MPI, the own node'"'"'s are read from its logs"
else grep "^bbfs counts\|FAIL\|rror" "$work/counts.out" | sed "s/^/  | /"; fail "replay counts across 2 nodes"; fi

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

# 4. from a node without the logs: through the servers of the writers nodes
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/far.dat" > "$work/far.out" 2>&1 \
    || fail "the deferred writer (4)"
grep -q "^server " "$work"/.far.dat.bbfs/*.manifest 2>/dev/null \
    && ok "the manifest names the writers nodes servers" || fail "no server in the manifest"
hosts=node2
if mpx -n 2 "$tool" --quiet "$work/far.dat" > "$work/far-replay.out" 2>&1 \
   && cmp -s "$work/ref.dat" "$work/far.dat"; then
    ok "bbfs-replay on a node without the logs reads them through their servers: equals ufs:"
else sed "s/^/  | /" "$work/far-replay.out" | tail -10; fail "bbfs-replay on a node without the logs"; fi
[ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ] && ok "and their servers removed them" \
    || fail "logs left on the writers nodes: node0 $(logs_on node0), node1 $(logs_on node1)"

# 5. a later job on another node reads a deferred file
hosts=node0,node1
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/read.dat" > "$work/read.out" 2>&1 \
    || fail "the deferred writer (5)"
hosts=node2
if mpx -n 3 "$readback" "$work/ref.dat" "bbfs:$work/read.dat" > "$work/readback.out" 2>&1; then
    ok "a later job on node2 reads the pending file: equals ufs: ($(tail -1 "$work/readback.out"))"
else sed "s/^/  | /" "$work/readback.out" | tail -10; fail "a later job reading on node2"; fi
[ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ] && ok "its open replayed and removed the logs" \
    || fail "logs left: node0 $(logs_on node0), node1 $(logs_on node1)"

# 6. the servers killed, then restarted
hosts=node0,node1
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/dead.dat" > "$work/dead.out" 2>&1 \
    || fail "the deferred writer (6)"
for n in node0 node1; do
    a=$("'"$cluster"'" exec "$CLUSTER_DIR" $n cat "$CLUSTER_DIR/local/.bbserver.$n.addr")
    pid=$("'"$cluster"'" exec "$CLUSTER_DIR" $n "$ctl" -S "$a" ping | sed -n "s/.* pid \([0-9]*\).*/\1/p")
    [ -n "$pid" ] && kill -9 "$pid" || fail "no server on $n to kill"
done
hosts=node2
start=$(date +%s)
mpx -n 2 "$tool" --quiet "$work/dead.dat" > "$work/dead-replay.out" 2>&1; rc=$?
took=$(( $(date +%s) - start ))
[ $rc = 1 ] && grep -q "bbserver" "$work/dead-replay.out" \
    && ok "with the servers killed, bbfs-replay on node2 fails naming the server (in ${took} s)" \
    || { sed "s/^/  | /" "$work/dead-replay.out" | tail -8; fail "bbfs-replay with the servers down: exit $rc"; }
[ "$(logs_on node0)" -gt 0 ] && [ "$(logs_on node1)" -gt 0 ] && ok "and keeps every log" \
    || fail "logs after the failed replay: node0 $(logs_on node0), node1 $(logs_on node1)"
for n in node0 node1; do
    "'"$cluster"'" exec "$CLUSTER_DIR" $n sh -c "setsid \"$server\" --logdir $CLUSTER_DIR/local \
        --address-file $CLUSTER_DIR/local/.bbserver.$n.addr --idle-limit 120 \
        > $work/restart-$n.log 2>&1 < /dev/null &"
done
sleep 1
if mpx -n 2 "$tool" --quiet "$work/dead.dat" > "$work/dead-replay2.out" 2>&1 \
   && cmp -s "$work/ref.dat" "$work/dead.dat"; then
    ok "restarted on their old ports, the servers serve the replay: equals ufs:"
else sed "s/^/  | /" "$work/dead-replay2.out" "$work"/restart-*.log | tail -12; fail "bbfs-replay after the restart"; fi
[ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ] && ok "and the logs are gone" \
    || fail "logs left: node0 $(logs_on node0), node1 $(logs_on node1)"

# 7. delete from another node
hosts=node0,node1
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/del.dat" > "$work/del.out" 2>&1 \
    || fail "the deferred writer (7)"
hosts=node2
if mpx -n 1 "$readback" --delete "bbfs:$work/del.dat" > "$work/delete.out" 2>&1 \
   && [ ! -e "$work/del.dat" ] && [ -z "$(ls "$work/.del.dat.bbfs" 2>/dev/null)" ] \
   && [ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ]; then
    ok "MPI_File_delete on node2 removed the file, its manifest and the logs on node0 and node1"
else sed "s/^/  | /" "$work/delete.out" | tail -6
    fail "delete from node2: logs left node0 $(logs_on node0), node1 $(logs_on node1)"; fi

# 8. a lost node: salvage replays the others
hosts=node0,node1
ROMIO_HINTS=$work/never.hints mpx -n 4 "$prog" "bbfs:$work/lost.dat" > "$work/lost.out" 2>&1 \
    || fail "the deferred writer (8)"
a=$("'"$cluster"'" exec "$CLUSTER_DIR" node1 cat "$CLUSTER_DIR/local/.bbserver.node1.addr")
pid=$("'"$cluster"'" exec "$CLUSTER_DIR" node1 "$ctl" -S "$a" ping | sed -n "s/.* pid \([0-9]*\).*/\1/p")
[ -n "$pid" ] && kill -9 "$pid" || fail "no server on node1 to kill"
hosts=node0
mpx -n 2 "$tool" --quiet "$work/lost.dat" > "$work/lost-replay.out" 2>&1; rc=$?
[ $rc = 1 ] && ok "with node1 lost, bbfs-replay on node0 fails" \
    || { sed "s/^/  | /" "$work/lost-replay.out" | tail -6; fail "bbfs-replay without --salvage, node1 lost: exit $rc"; }
mpx -n 2 "$tool" --salvage --quiet "$work/lost.dat" > "$work/lost-salvage.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "not recovered: .*node1" "$work/lost-salvage.out")" = 2 ] \
   && [ "$(grep -c "lost: writer [0-9]*.s epochs 1-4 .*bbserver node1" "$work/lost-salvage.out")" = 2 ] \
   && [ "$(grep -c "are left there" "$work/lost-salvage.out")" = 2 ] \
   && [ -z "$(ls "$work/.lost.dat.bbfs" 2>/dev/null)" ] && [ "$(logs_on node0)" = 0 ]; then
    ok "--salvage replays node0'"'"'s writers, names node1'"'"'s two as lost with their 4 epochs, and their logs as left"
else sed "s/^/  | /" "$work/lost-salvage.out" | tail -10
    fail "bbfs-replay --salvage with node1 lost: exit $rc, logs on node0 $(logs_on node0)"; fi
exit $((fails > 0))'
rc=$?
[ $rc = 0 ] && rm -rf "$work"
exit $rc
