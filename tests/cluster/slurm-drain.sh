#!/usr/bin/env bash
# slurm-drain.sh — burst-buffer workflows as Slurm jobs (docs/drain.md):
# bbfs_replay=background under a real Slurm (slurm.sh), node-local logs
# (BBFS_LOGDIR on each node's own tmpfs), job scripts as a user writes them.
#   1. A checkpoint job on node0 writes with background, reads it back
#      while node0's server drains it, computes on, and ends with
#      "bbsctl wait FILE": the file equals the ufs: reference when the job
#      ends, and no log is left on node0.
#   2. A restart job on node1 reads a checkpoint while node0's server still
#      drains it (the checkpoint job computing meanwhile): every byte equals
#      the reference (node1 cannot read node0's logs: its open waits for
#      the drain).
#   3. A job killed by scancel while its checkpoint drains, and node0's
#      server with it (as Slurm does where it tracks jobs by cgroup): the
#      next job on node0 runs "bbsctl wait FILE || srun bbfs-replay FILE"
#      and the file then equals the reference; nothing synced is lost.
# The cluster goes down at the end, also when a step fails.
#
# Environment: BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="$BUILDDIR/tests/cluster/slurm-drain"
prog="$BUILDDIR/mpiio-tests/t_background"
readback="$BUILDDIR/tests/cluster/t_readback"
ctl="$BUILDDIR/bbserver/bbsctl"
replay="$BUILDDIR/tools/bbfs-replay"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
for f in "$prog" "$readback" "$ctl" "$replay" "$BUILDDIR/mpich/bin/bbserver"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make check builds it)"; exit 1; }
done
# (slurm.sh up says which Slurm or munge program is missing)
rm -rf "$work"; mkdir -p "$work"
export BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120

"$here/slurm.sh" with 2 "$work/c" env work="$work" prog="$prog" readback="$readback" \
    ctl="$ctl" replay="$replay" bash -c '
set -u
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
on() { local n=$1; shift; "'"$here"'/cluster.sh" exec "$CLUSTER_DIR" "$n" "$@"; }
logs_on() { on "$1" sh -c "ls $CLUSTER_DIR/local | grep -c log\$"; }
# script NAME NODE BODY: a job script of 4 tasks on one node, its output in
# $work/NAME.out
script() {
    { echo "#!/bin/bash"
      echo "#SBATCH --job-name=$1 --nodes=1 --ntasks=4 --overcommit --nodelist=$2"
      echo "#SBATCH --output=$work/$1.out"
      echo "set -eu"
      echo "export BBFS_LOGDIR=$CLUSTER_DIR/local"
      echo "$3"; } > "$work/$1.sh"
}
# run NAME NODE BODY: submit and wait for the job; its exit status
run() { script "$@"; sbatch --wait --quiet "$work/$1.sh"; }
show() { sed "s/^/  | /" "$work/$1.out" | tail -${2:-12}; }
# drain_running FILE: the session of FILE is claimed (a drain holds it)
# within 20 s
drain_running() {
    for _ in $(seq 200); do
        grep -q "^running\|^held" <(on node0 env BBFS_LOGDIR=$CLUSTER_DIR/local "$ctl" status "$1" 2>/dev/null) \
            && return 0
        sleep 0.1
    done
    return 1
}

# fresh_server: node0 s server (started by an earlier job, alive for its
# idle limit) saves its map and exits, so that the next job starts one with
# that job s BBFS_DRAIN_RATE: a server reused from step 1 drained at 1 MB/s,
# and once finished the drain step 3 must cut before its kill came.
server_pid() {   # node0 s server, as its ping says; nothing if none answers
    on node0 env BBFS_LOGDIR=$CLUSTER_DIR/local "$ctl" ping 2>/dev/null | sed -n "s/.* pid \([0-9]*\) .*/\1/p"
}
fresh_server() {
    local pid
    pid=$(server_pid)
    [ -n "$pid" ] || return 0
    kill -TERM "$pid"
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
    fail "node0 s server (pid $pid) did not exit within 10 s of SIGTERM"
}

run ref node0 "srun $prog ufs:$work/ref.dat" || { show ref; exit 1; }

# 1. checkpoint, compute, bbsctl wait
f=$work/ckpt.dat
if run ckpt node0 "export BBFS_DRAIN_RATE=1
srun $prog bbfs:$f background draining
sleep 1    # the next compute phase, while node0'"'"'s server drains
$ctl wait $f"; then
    ok "checkpoint job: written with background, read back while drained, ended with bbsctl wait: $(tail -1 "$work/ckpt.out")"
else show ckpt; fail "the checkpoint job"; fi
cmp -s "$work/ref.dat" "$f" && ok "at the job'"'"'s end the file equals ufs:'"'"'s" \
    || fail "at the job'"'"'s end the file differs from ufs:'"'"'s"
[ "$(logs_on node0)" = 0 ] && ok "no log left on node0" || fail "$(logs_on node0) logs left on node0"

# 2. a restart job on node1 while node0 drains (the checkpoint job computes)
f=$work/restart.dat
fresh_server
script ckpt2 node0 "export BBFS_DRAIN_RATE=0.1
srun $prog bbfs:$f background draining
sleep 8    # computing on
$ctl wait $f"
sbatch --wait --quiet "$work/ckpt2.sh" & job=$!
if drain_running "$f"; then
    ok "node0 drains the checkpoint while its job computes"
    if run restart node1 "srun $readback $work/ref.dat bbfs:$f"; then
        ok "restart job on node1, during the drain: every byte equals ufs:'"'"'s ($(tail -1 "$work/restart.out"))"
    else show restart; fail "the restart job on node1"; fi
else fail "no drain of $f ran on node0 within 20 s"; fi
wait $job && ok "the checkpoint job ended with bbsctl wait: $(tail -1 "$work/ckpt2.out")" \
    || { show ckpt2; fail "the checkpoint job of step 2"; }
cmp -s "$work/ref.dat" "$f" && ok "the drained file equals ufs:'"'"'s" || fail "the drained file differs"

# 3. scancel during the drain; the next job finishes it
f=$work/cancelled.dat
# (0.01 MB/s: the 0.5 MiB take 50 s, so the drain is still running when
# the server is killed below, after the scancel has taken effect; at 0.05
# (10 s) the busy machine of a cold CI run let it finish first, once)
fresh_server
script doomed node0 "export BBFS_DRAIN_RATE=0.01
srun $prog bbfs:$f background draining
sleep 600  # cancelled before it ends"
id=$(sbatch --parsable "$work/doomed.sh")
if drain_running "$f"; then
    echo "  status at the scancel: $(on node0 env BBFS_LOGDIR=$CLUSTER_DIR/local "$ctl" status "$f" 2>&1 | tr "\n" " ")"
    scancel "$id"
    for _ in $(seq 100); do squeue -h -j "$id" 2>/dev/null | grep -q . || break; sleep 0.2; done
    ok "job $id cancelled while node0 drained its checkpoint"
else show doomed; scancel "$id"; fail "no drain of $f ran before the scancel"; fi
# (proctrack/linuxproc lets the server the job started live on, and its
# drain with it; a Slurm that tracks jobs by cgroup kills it with the job:
# so does this test, to cut the drain)
pid=$(server_pid)
if [ -n "$pid" ]; then
    ok "node0'"'"'s server (pid $pid) outlived the cancelled job; killed now, mid-drain, as a cgroup would"
    kill -9 "$pid"
else fail "no server answered on node0 after the scancel"; fi
sleep 0.5
# (the first domain of the drain holds the last value of every byte, at once: the
# rate only spaces the domains, so the bytes of the file may equal the
# reference already; its logs stay until the drain ends)
n=$(logs_on node0)
[ "$n" -gt 0 ] && ok "$n logs left on node0 after the kill: the drain was cut" \
    || { show doomed; fail "no log left on node0 before the next job: the drain was not cut"; }
if run next node0 "$ctl wait $f || srun $replay $f"; then
    ok "next job: bbsctl wait || bbfs-replay finished it: $(grep -v "^ *$" "$work/next.out" | tail -1)"
else show next; fail "the next job"; fi
cmp -s "$work/ref.dat" "$f" && ok "the cancelled job'"'"'s file equals ufs:'"'"'s" \
    || fail "the cancelled job'"'"'s file differs from ufs:'"'"'s"
[ "$(logs_on node0)" = 0 ] && ok "no log left on node0" || fail "$(logs_on node0) logs left on node0"

squeue -h | grep -q . && fail "jobs left in the queue: $(squeue -h)"
exit $fails'
rc=$?
[ $rc = 0 ] && echo "PASS" || echo "FAIL ($rc)"
exit $rc
