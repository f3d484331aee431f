#!/usr/bin/env bash
# node-failures.sh — what a job sees when another node's link fails.
#
# On 2 emulated nodes, each with its own log directory, a job on both nodes
# writes four epochs (t_crashpoints) and leaves its logs pending
# (bbfs_replay never); then node1's link goes down (ip link set eth0 down
# inside node1; node0 keeps node1's link-layer address, so that its packets
# go unanswered rather than fail at once).
#   1. A reader job on node0 alone opens the file (t_readback, hint
#      bbfs_server_timeout 5): the open replays the pending logs and must
#      reach node1's server for node1's.  It must fail on every process
#      with MPI_ERR_IO and a message naming node1's server and the timeout,
#      within the timeout and a few seconds of clean-up, not hang (it hung
#      in the connection: killed after 90 s).  Every log stays.
#   2. The link comes back: the same reader job succeeds, its file equals
#      the ufs: run's, and node1's logs are gone.
#   3. node1's log storage full (1 MiB) in the middle of an epoch
#      (t_crashpoints, 4 processes): node1's two processes get
#      MPI_ERR_NO_SPACE as their first error, at the same collective write
#      (the one whose bytes did not fit), node0's see no error (a logged
#      collective write makes no communication, and their own writes all
#      fit), and the job ends (no hang); with room again, bbfs-replay
#      recovers every block a completed sync covered (t_crashpoints
#      --verify).
#   4. Two jobs share a file through the servers (t_link_cut; hints
#      bbfs_force_remote, bbfs_server_timeout 5): a reader on node0 (the
#      file's map on node0's server) and a writer on node1.  node1's link
#      cut: the reader's read of node1's block (a remote read), the
#      writer's sync (an attach) and its read of node0's block (a query)
#      each fail with MPI_ERR_IO naming bbserver within the timeout and 5 s;
#      the link back: each works again, and after both jobs a third job
#      reads every block back.
#   5. node1 lost after a sync (t_node_lost): its processes and its
#      server killed, its log directory emptied.  Under plain mpiexec the
#      launcher ends the job within 30 s (no hang).  Under mpiexec
#      -disable-auto-cleanup node0's processes go on: their next collective
#      write is logged and succeeds (it needs no other process), their close
#      (a replay with every process) fails with MPI_ERR_IO saying a node was lost,
#      within the timeout (they succeeded, or failed with a rank and error
#      class read from bytes no process sent, before).  node0's logs stay;
#      bbfs-replay on node0 fails, and with --salvage recovers node0's two
#      writers' synced blocks and names node1's two as lost.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/cluster.sh"
work="$BUILDDIR/tests/cluster/node-failures"
prog="$BUILDDIR/mpiio-tests/t_crashpoints"
linkcut="$BUILDDIR/tests/cluster/t_link_cut"
nodelost="$BUILDDIR/tests/cluster/t_node_lost"
readback="$BUILDDIR/tests/cluster/t_readback"
tool="$BUILDDIR/tools/bbfs-replay"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
for f in "$prog" "$readback" "$tool" "$linkcut" "$nodelost"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make check builds it)"; exit 1; }
done
rm -rf "$work"; mkdir -p "$work"
export MPIEXEC BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120
printf 'bbfs_replay never\nbbfs_server_timeout 5\n' > "$work/never.hints"
printf 'bbfs_server_timeout 5\n' > "$work/t5.hints"
printf 'bbfs_server_timeout 5\nbbfs_force_remote true\n' > "$work/remote.hints"

"$cluster" with 2 "$work/c" env work="$work" prog="$prog" readback="$readback" tool="$tool" linkcut="$linkcut" \
    nodelost="$nodelost" ctl="$BUILDDIR/bbserver/bbsctl" bash -c '
set -u
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
on() { "'"$cluster"'" exec "$CLUSTER_DIR" "$@"; }
logs_on() { on "$1" sh -c "ls $CLUSTER_DIR/local | grep -c log$"; }
export BBFS_LOGDIR=$CLUSTER_DIR/local
CLUSTER_HOSTS=node0,node1 "$CLUSTER_DIR/mpiexec" -n 4 "$prog" "ufs:$work/ref.dat" \
    </dev/null > "$work/ref.out" 2>&1 || { cat "$work/ref.out"; exit 1; }
ROMIO_HINTS=$work/never.hints CLUSTER_HOSTS=node0,node1 "$CLUSTER_DIR/mpiexec" -n 4 "$prog" \
    "bbfs:$work/f.dat" </dev/null > "$work/write.out" 2>&1 \
    || { sed "s/^/  | /" "$work/write.out"; echo "FAIL: the writer job"; exit 1; }
before=$(logs_on node1)
[ "$before" -gt 0 ] || { echo "FAIL: no pending logs on node1"; exit 1; }

# 1. node1 cut off during the open'"'"'s replay.  node0 keeps node1'"'"'s
# link-layer address (as it would for a while after the last packet): its
# packets go out and get no answer, rather than failing at once for want of
# an address (which the old client survived by luck).
mac=$(on node1 ip -o link show dev eth0 | sed -n "s/.*link\/ether \([0-9a-f:]*\).*/\1/p")
ip1=$(on node1 sh -c "ip -4 -o addr show dev eth0" | sed -n "s/.*inet \([0-9.]*\).*/\1/p")
on node0 ip neigh replace "$ip1" lladdr "$mac" dev eth0 nud permanent \
    || { echo "FAIL: cannot pin node1'"'"'s address on node0"; exit 1; }
on node1 ip link set eth0 down
start=$(date +%s)
ROMIO_HINTS=$work/t5.hints CLUSTER_HOSTS=node0 timeout 90 "$CLUSTER_DIR/mpiexec" -n 2 \
    "$readback" "$work/ref.dat" "bbfs:$work/f.dat" </dev/null > "$work/cut.out" 2>&1
rc=$?; took=$(( $(date +%s) - start ))
if [ $rc = 124 ]; then fail "the reader on node0 hung with node1 cut off (killed after 90 s)"
elif [ $rc = 0 ]; then fail "the reader on node0 succeeded with node1 cut off"
elif [ "$(grep -c "did not answer within 5 s (bbfs_server_timeout)" "$work/cut.out")" -lt 1 ] \
     || ! grep -q "node1:" "$work/cut.out" \
     || [ "$(grep -c "open.*failed\|FAIL \[rank" "$work/cut.out")" -lt 2 ]; then
    sed "s/^/  | /" "$work/cut.out" | tail -8
    fail "with node1 cut off the open failed, but not on both processes naming node1 and the timeout"
elif [ $took -gt 20 ]; then fail "with node1 cut off the open took $took s to fail (timeout 5 s)"
else ok "node1 cut off: the open on node0 fails on both processes in $took s naming node1'"'"'s server and the 5 s timeout"; fi
[ "$(logs_on node1)" = "$before" ] && ok "and every log on node1 stays ($before files)" \
    || fail "logs on node1 after the failed open: $(logs_on node1) of $before"
# 2. the link back
on node1 ip link set eth0 up
sleep 1
if ROMIO_HINTS=$work/t5.hints CLUSTER_HOSTS=node0 timeout 90 "$CLUSTER_DIR/mpiexec" -n 2 \
       "$readback" "$work/ref.dat" "bbfs:$work/f.dat" </dev/null > "$work/back.out" 2>&1 \
   && cmp -s "$work/ref.dat" "$work/f.dat" && [ "$(logs_on node1)" = 0 ]; then
    ok "the link back: the reader on node0 replays node1'"'"'s logs; the file equals ufs:, no log left"
else sed "s/^/  | /" "$work/back.out" | tail -8; fail "after the link came back (logs on node1: $(logs_on node1))"; fi

# 3. node1'"'"'s log device full in the middle of an epoch
on node1 mount -o remount,size=1m "$CLUSTER_DIR/local" || { echo "FAIL: cannot shrink node1'"'"'s storage"; exit 1; }
rm -f "$work"/full.dat*
BBFS_EXPECT_CLASS=MPI_ERR_NO_SPACE BBFS_FAULT_RANK=1 CLUSTER_HOSTS=node0,node1 timeout 120 \
    "$CLUSTER_DIR/mpiexec" -n 4 "$prog" "bbfs:$work/full.dat" </dev/null > "$work/full.out" 2>&1
rc=$?
# (grep -o: the output of another process may share a line with the error, as
# mpiexec forwards the stdout and stderr of each process on its own)
calls=$(grep -o "process [13]: first error in .*: Not enough space for file" "$work/full.out" \
        | sed "s/^process [13]: first error in \(.*\): Not enough space for file$/\1/" | sort | uniq -c)
if [ $rc != 0 ]; then sed "s/^/  | /" "$work/full.out" | tail -8; fail "node1 full: the job failed or hung (status $rc)"
elif [ "$(echo "$calls" | wc -l)" != 1 ] || [ "$(echo "$calls" | awk "{print \$1}")" != 2 ] \
     || [ "$(grep -o "process [0-3]: first error" "$work/full.out" | wc -l)" != 2 ]; then
    sed "s/^/  | /" "$work/full.out" | tail -8
    fail "node1 full: not node1'"'"'s two processes alone got MPI_ERR_NO_SPACE first, at the same call: $calls"
else ok "node1 full: node1'"'"'s 2 processes got MPI_ERR_NO_SPACE first at the same call ($(echo "$calls" | sed "s/^ *[0-9]* //")), node0'"'"'s none"; fi
on node1 mount -o remount,size=256m "$CLUSTER_DIR/local"
if CLUSTER_HOSTS=node0,node1 timeout 120 "$CLUSTER_DIR/mpiexec" -n 4 "$tool" --quiet "$work/full.dat" \
       </dev/null > "$work/full-replay.out" 2>&1 \
   && "$prog" --verify "$work/full.dat" > "$work/full-verify.out" 2>&1; then
    ok "with room again, bbfs-replay recovers what the syncs covered ($(sed -n "s/.*(\(.*\) by process).*/\1/p" "$work/full-verify.out") epochs by process)"
else sed "s/^/  | /" "$work/full-replay.out" "$work/full-verify.out" | tail -8; fail "node1 full: the recovery"; fi

# 4. the link cut under two running jobs that share a file through the servers
sig="$work/linkcut"; rm -rf "$sig"; mkdir -p "$sig"
wait_for() { for i in $(seq 1 1200); do [ -e "$sig/$1" ] && return 0; sleep 0.1; done; return 1; }
export ROMIO_HINTS=$work/remote.hints BBFS_TEST_TIMEOUT=5
CLUSTER_HOSTS=node0 timeout 150 "$CLUSTER_DIR/mpiexec" -n 2 "$linkcut" "bbfs:$work/cut.dat" "$sig" reader \
    </dev/null > "$work/cut-reader.out" 2>&1 &
rpid=$!
CLUSTER_HOSTS=node1 timeout 150 "$CLUSTER_DIR/mpiexec" -n 2 "$linkcut" "bbfs:$work/cut.dat" "$sig" writer \
    </dev/null > "$work/cut-writer.out" 2>&1 &
wpid=$!
if wait_for r-ready && wait_for w-synced; then
    on node0 ip neigh replace "$ip1" lladdr "$mac" dev eth0 nud permanent
    on node1 ip link set eth0 down
    touch "$sig/cut"
    wait_for r-cut-done && wait_for w-cut-done || fail "the jobs did not get past the cut in 120 s"
    on node1 ip link set eth0 up
    sleep 1
    touch "$sig/back"
else fail "the jobs never got ready"; touch "$sig/cut" "$sig/back"; fi
wait $rpid; rrc=$?; wait $wpid; wrc=$?
unset ROMIO_HINTS
if [ $rrc = 0 ] && [ $wrc = 0 ]; then
    ok "node1 cut off under two jobs: $(grep -h "with the link cut failed" "$work/cut-reader.out" "$work/cut-writer.out" | tr "\n" ";" | sed "s/;$//"); all work again with the link back"
else sed "s/^/  | /" "$work/cut-reader.out" "$work/cut-writer.out" | grep -v "^  | *$" | tail -16
    fail "node1 cut off under two jobs (reader $rrc, writer $wrc)"; fi
if CLUSTER_HOSTS=node0,node1 timeout 90 "$CLUSTER_DIR/mpiexec" -n 4 "$linkcut" "bbfs:$work/cut.dat" "$sig" check \
       </dev/null > "$work/cut-check.out" 2>&1; then
    ok "after both jobs, a third reads every block back"
else sed "s/^/  | /" "$work/cut-check.out" | tail -8; fail "the check after the cut"; fi

# 5. node1 lost after a sync: its processes, its server and its storage
lose_node1() {      # $1: the directory where the job says what to kill
    for i in $(seq 1 600); do
        [ -e "$1/synced" ] && [ "$(ls "$1" | grep -c "^off\.")" = 2 ] && break; sleep 0.1
    done
    [ -e "$1/synced" ] || { fail "the job on both nodes never synced"; return 1; }
    local a spid
    a=$(on node1 cat "$CLUSTER_DIR/local/.bbserver.node1.addr")
    spid=$(on node1 "$ctl" -S "$a" ping | sed -n "s/.* pid \([0-9]*\).*/\1/p")
    [ -n "$spid" ] || fail "no server on node1 to kill"
    kill -9 $(cat "$1"/off.*) $spid
    on node1 sh -c "rm -rf $CLUSTER_DIR/local/*"
    touch "$1/killed"
}
export BBFS_TEST_TIMEOUT=5
for how in plain survivors; do
    lost="$work/lost-$how"; rm -rf "$lost"; mkdir -p "$lost"
    opt=; [ $how = survivors ] && opt=-disable-auto-cleanup
    start=$(date +%s)
    ROMIO_HINTS=$work/t5.hints CLUSTER_HOSTS=node0,node1 timeout 90 "$CLUSTER_DIR/mpiexec" $opt -n 4 \
        "$nodelost" "bbfs:$work/lost-$how.dat" "$lost" </dev/null > "$work/lost-$how.out" 2>&1 &
    jpid=$!
    lose_node1 "$lost"
    wait $jpid; rc=$?; took=$(( $(date +%s) - start ))
    if [ $rc = 124 ]; then fail "node1 lost ($how mpiexec): the job hung (killed after 90 s)"
    elif [ $how = plain ]; then
        [ $took -le 30 ] && ok "node1 lost: plain mpiexec ends the job in $took s" \
            || fail "node1 lost: plain mpiexec took $took s to end the job"
    elif [ "$(grep -c "^rank [0-3]: ok" "$work/lost-$how.out")" = 2 ] && ! grep -q FAIL "$work/lost-$how.out"; then
        ok "node1 lost, -disable-auto-cleanup: on both survivors a collective write is logged, $(sed -n "s/^rank 0: \(.*\) with a node lost: class [0-9]* in \([0-9.]*\) s.*/\1 fails in \2 s/p" "$work/lost-$how.out" | tr "\n" ";" | sed "s/;$//"), MPI_ERR_IO saying so"
    else sed "s/^/  | /" "$work/lost-$how.out" | grep -v "^  | *$" | tail -12
        fail "node1 lost, -disable-auto-cleanup: the survivors"; fi
done
[ "$(logs_on node0)" -gt 0 ] && ok "node0'"'"'s logs stay ($(logs_on node0) files)" || fail "node0'"'"'s logs are gone"
lost="$work/lost-survivors"
CLUSTER_HOSTS=node0 timeout 90 "$CLUSTER_DIR/mpiexec" -n 2 "$tool" --quiet "$work/lost-survivors.dat" \
    </dev/null > "$work/lost-replay.out" 2>&1; rc=$?
[ $rc = 1 ] && ok "bbfs-replay on node0 without --salvage fails" \
    || { sed "s/^/  | /" "$work/lost-replay.out" | tail -6; fail "bbfs-replay without --salvage, node1 lost: exit $rc"; }
CLUSTER_HOSTS=node0 timeout 90 "$CLUSTER_DIR/mpiexec" -n 2 "$tool" --salvage --quiet "$work/lost-survivors.dat" \
    </dev/null > "$work/lost-salvage.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c "lost: writer [13].s .*bbserver node1" "$work/lost-salvage.out")" = 2 ] \
   && "$nodelost" --check "$work/lost-survivors.dat" "$lost" > "$work/lost-check.out" 2>&1; then
    ok "bbfs-replay --salvage on node0: $(cat "$work/lost-check.out" | sed "s/^ok: //"); names writers 1 and 3 as lost on node1"
else sed "s/^/  | /" "$work/lost-salvage.out" "$work/lost-check.out" | tail -10
    fail "bbfs-replay --salvage with node1 lost: exit $rc"; fi
exit $((fails > 0))'
rc=$?
[ $rc = 0 ] && rm -rf "$work"
exit $rc
