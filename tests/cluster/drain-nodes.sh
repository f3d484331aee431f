#!/usr/bin/env bash
# drain-nodes.sh — bbfs_replay=background with a later job on another node
# (docs/drain.md), on emulated nodes whose logs live on each node's own
# storage:
#   1. A job on node0 writes a checkpoint with background and reads it back
#      at once while node0's bbserver (started by the job's close) drains it
#      slowly (BBFS_DRAIN_RATE).
#   2. Right after, a job on node1 reads the file: node1 cannot reach
#      node0's logs, so its open waits for node0's drain, and every byte it
#      reads equals the ufs: reference (before the wait it read the old
#      bytes of the file, silently).
#   3. node0's server killed (SIGKILL) in the middle of another file's
#      drain: the next background close on node0 starts a server with the
#      same journal, which finishes that file too.
#   4. A job on both nodes writes a checkpoint with background: node0's
#      server (process 0's node) drains it, reading node1's logs through
#      node1's server; the job's read-back open waits for it (node0 cannot
#      read node1's logs in place); bbsctl wait, then the file equals the
#      reference, no log is left on either node, the map holds nothing.
#      The job names the file through a symbolic link: the map must know it
#      by the name the drain gives (its real path) to forget it.
#   5. The same with node0's server killed in the middle of that drain:
#      the next background close on both nodes restarts it, and its
#      journal finishes the first file too (node1's logs read again); no
#      log, session or map is left.
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/cluster.sh"
work="$BUILDDIR/tests/cluster/drain-nodes"
prog="$BUILDDIR/mpiio-tests/t_background"
readback="$BUILDDIR/tests/cluster/t_readback"
ctl="$BUILDDIR/bbserver/bbsctl"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
for f in "$prog" "$readback" "$ctl" "$BUILDDIR/mpich/bin/bbserver"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make check builds it)"; exit 1; }
done
rm -rf "$work"; mkdir -p "$work"
export MPIEXEC BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=60

"$cluster" with 2 "$work/c" env work="$work" prog="$prog" readback="$readback" ctl="$ctl" \
    bash -c '
set -u
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
mpx() { local h=$1; shift; CLUSTER_HOSTS=$h "$CLUSTER_DIR/mpiexec" "$@" </dev/null; }
on() { local n=$1; shift; "'"$cluster"'" exec "$CLUSTER_DIR" "$n" "$@"; }
export BBFS_LOGDIR=$CLUSTER_DIR/local
ctl0() { on node0 sh -c "\"$ctl\" -T 120 -S \"\$(cat $BBFS_LOGDIR/.bbserver.node0.addr)\" $*"; }
ctl1() { on node1 sh -c "\"$ctl\" -T 120 -S \"\$(cat $BBFS_LOGDIR/.bbserver.node1.addr)\" $*"; }

mpx node0 -n 4 "$prog" "ufs:$work/ref.dat" > "$work/ref.out" 2>&1 || { cat "$work/ref.out"; exit 1; }

# 1. the checkpoint job on node0, its server draining at 0.25 MB/s
f=$work/ckpt.dat
if BBFS_DRAIN_RATE=0.25 mpx node0 -n 4 "$prog" "bbfs:$f" background draining > "$work/w.out" 2>&1
then ok "node0: the checkpoint read back right while its server drained it"
else sed "s/^/  | /" "$work/w.out" | tail; fail "node0: t_background"; fi
st=$(ctl0 status "$f" 2>&1)
case "$st" in *running*|*held*|*queued*) ok "node0 still drains after the job: $(echo "$st" | tail -1)" ;;
              *) fail "node0 was not draining after the job: $st" ;; esac

# 2. a restart job on node1 reads it at once
t0=$(date +%s.%N)
if mpx node1 -n 4 "$readback" "$work/ref.dat" "bbfs:$f" > "$work/r.out" 2>&1
then ok "node1: every byte read while node0 drained equals ufs:'"'"'s ($(echo "$(date +%s.%N) - $t0" | bc | cut -c1-4) s, with the wait)"
else sed "s/^/  | /" "$work/r.out" | tail; fail "node1 read the file while node0 drained it"; fi
out=$(ctl0 wait "$f" 2>&1) && ok "node0: bbsctl wait: $out" || fail "node0: wait: $out"
cmp -s "$work/ref.dat" "$f" && ok "the drained file equals ufs:'"'"'s" || fail "the drained file differs"
left=$(on node0 sh -c "ls $BBFS_LOGDIR | grep -c log\$")
[ "$left" = 0 ] && ok "no log is left on node0" || fail "$left logs left on node0"

# 3. the server killed mid-drain; the next open on node0 restarts it
# (node0 server stopped first, so that the job starts one that drains at
# the rate given here: the one still running from part 1 drains at 0.25
# MB/s, and its drain could end before the kill on a loaded machine)
stop0() { pid=$(ctl0 ping | sed -n "s/.* pid \([0-9]*\) .*/\1/p"); [ -z "$pid" ] || kill "$pid"
          for i in $(seq 50); do ctl0 ping >/dev/null 2>&1 || break; sleep 0.1; done; }
stop0
f=$work/killed.dat
BBFS_DRAIN_RATE=0.1 mpx node0 -n 4 "$prog" "bbfs:$f" > "$work/k.out" 2>&1 \
    || { sed "s/^/  | /" "$work/k.out" | tail; fail "node0: t_background (killed)"; }
st=$(ctl0 status "$f" 2>&1)
case "$st" in *running*|*held*|*queued*) ok "node0 drains: $(echo "$st" | tail -1)" ;;
              *) fail "node0 was not draining before the kill: $st" ;; esac
pid=$(on node0 sh -c "\"$ctl\" -S \"\$(cat $BBFS_LOGDIR/.bbserver.node0.addr)\" ping" | sed -n "s/.* pid \([0-9]*\) .*/\1/p")
[ -n "$pid" ] && kill -9 "$pid" && ok "node0: its server (pid $pid) killed while draining" \
    || fail "node0: no server pid to kill"
sleep 0.5
[ -n "$(ls "$work/.killed.dat.bbfs/" 2>/dev/null)" ] && ok "the killed drain left the session pending" \
    || fail "no session pending after the kill (the file $(cmp -s "$work/ref.dat" "$f" && echo is || echo is not) complete; the job said: $(tail -3 "$work/k.out" | tr "\n" " "))"
mpx node0 -n 4 "$prog" "bbfs:$work/next.dat" > "$work/n.out" 2>&1 \
    || { sed "s/^/  | /" "$work/n.out" | tail; fail "node0: t_background (next)"; }
out=$(ctl0 wait "$f" "$work/next.dat" 2>&1) && ok "node0: the restarted server finished it: $out" \
    || fail "node0: wait after the restart: $out"
cmp -s "$work/ref.dat" "$f" && ok "the file drained after the restart equals ufs:'"'"'s" \
    || fail "the file drained after the restart differs"

# 4. a checkpoint written on both nodes, drained by node0 with node1'"'"'s logs
# (node0'"'"'s server stopped first, so that the job starts one with the
# drain rate given here)
stop0
ln -sfn "$work" "$work/via"
f=$work/via/both.dat
if BBFS_DRAIN_RATE=0.5 mpx node0,node1 -n 4 "$prog" "bbfs:$f" background draining > "$work/b.out" 2>&1
then ok "2 nodes: background in force; the read-back open waited for node0'"'"'s drain and read every byte right"
else sed "s/^/  | /" "$work/b.out" | tail; fail "2 nodes: t_background"; fi
out=$(ctl0 wait "$f" 2>&1) && ok "2 nodes: node0: bbsctl wait: $out" || fail "2 nodes: wait: $out"
cmp -s "$work/ref.dat" "$f" && ok "2 nodes: the drained file equals ufs:'"'"'s" \
    || fail "2 nodes: the drained file differs"
st=$(ctl0 stat "$f" 2>&1)
case "$st" in *"holds nothing"*|*"ranges 0 "*) ok "2 nodes: the map forgot the drained session ($st)" ;;
              *) fail "2 nodes: the map still holds the drained session: $st" ;; esac
held() { ctl0 ping | sed -n "s/.* files \([0-9]*\) .*/\1/p"; }
[ "$(held)" = 0 ] && ok "2 nodes: node0'"'"'s server holds no map" \
    || fail "2 nodes: node0'"'"'s server still holds a map ($(ctl0 ping))"
p1=$(ctl1 ping)
for op in export read remove; do
    n=$(echo "$p1" | sed -n "s/.* $op \([0-9]*\).*/\1/p")
    [ "${n:-0}" -gt 0 ] && ok "2 nodes: node1'"'"'s server served $n ${op}s" \
        || fail "2 nodes: node1'"'"'s server served no $op (ping: $p1)"
done
for n in node0 node1; do
    left=$(on $n sh -c "ls $BBFS_LOGDIR | grep -c log\$")
    [ "$left" = 0 ] && ok "2 nodes: no log is left on $n" || fail "2 nodes: $left logs left on $n"
done
[ -z "$(ls "$work/.both.dat.bbfs/" 2>/dev/null)" ] && ok "2 nodes: no session is left" \
    || fail "2 nodes: sessions left: $(ls "$work/.both.dat.bbfs/")"

# 5. node0'"'"'s server killed while it drains a 2-node file
stop0
f=$work/both-killed.dat
BBFS_DRAIN_RATE=0.1 mpx node0,node1 -n 4 "$prog" "bbfs:$f" background no-read-back > "$work/bk.out" 2>&1 \
    || { sed "s/^/  | /" "$work/bk.out" | tail; fail "2 nodes: t_background (killed)"; }
st=$(ctl0 status "$f" 2>&1)
case "$st" in *running*|*held*|*queued*) ok "2 nodes: node0 drains: $(echo "$st" | tail -1)" ;;
              *) fail "2 nodes: node0 was not draining: $st" ;; esac
pid=$(ctl0 ping | sed -n "s/.* pid \([0-9]*\) .*/\1/p")
[ -n "$pid" ] && kill -9 "$pid" && ok "2 nodes: node0'"'"'s server (pid $pid) killed while draining" \
    || fail "2 nodes: no server pid to kill"
sleep 0.5
cmp -s "$work/ref.dat" "$f" && fail "2 nodes: the file was complete before the kill (drain not slowed?)"
mpx node0,node1 -n 4 "$prog" "bbfs:$work/both-next.dat" > "$work/bn.out" 2>&1 \
    || { sed "s/^/  | /" "$work/bn.out" | tail; fail "2 nodes: t_background (next)"; }
out=$(ctl0 wait "$f" "$work/both-next.dat" 2>&1) && ok "2 nodes: the restarted server finished both: $out" \
    || fail "2 nodes: wait after the restart: $out"
for g in "$f" "$work/both-next.dat"; do
    cmp -s "$work/ref.dat" "$g" && ok "2 nodes: $(basename "$g") equals ufs:'"'"'s" \
        || fail "2 nodes: $(basename "$g") differs from ufs:'"'"'s"
done
for n in node0 node1; do
    left=$(on $n sh -c "ls $BBFS_LOGDIR | grep -c log\$")
    [ "$left" = 0 ] && ok "2 nodes, after the restart: no log is left on $n" \
        || fail "2 nodes, after the restart: $left logs left on $n"
done
for g in both-killed both-next; do
    [ -z "$(ls "$work/.$g.dat.bbfs/" 2>/dev/null)" ] && ok "2 nodes: no session of $g is left" \
        || fail "2 nodes: sessions of $g left: $(ls "$work/.$g.dat.bbfs/")"
done
[ "$(held)" = 0 ] && ok "2 nodes, after the restart: node0'"'"'s server holds no map" \
    || fail "2 nodes, after the restart: node0'"'"'s server still holds a map ($(ctl0 ping))"
exit $((fails > 0))
'
rc=$?
[ $rc = 0 ] && echo "drain-nodes: all passed" || echo "drain-nodes: failed"
exit $rc
