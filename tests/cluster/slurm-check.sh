#!/usr/bin/env bash
# slurm-check.sh — bbfs under a real Slurm (issue 33): Debian's slurmctld
# and one slurmd per emulated node (slurm.sh), jobs submitted with sbatch
# as a user submits them, node-local logs (BBFS_LOGDIR on each node's own
# tmpfs).
#   1. A job script on 2 nodes launches the MPI program with srun (PMI-2),
#      on ufs: and on bbfs:: the files are equal byte for byte.
#   2. The same job with mpiexec inside the allocation.
#   3. The job's bbfs opens started one bbserver on each of its nodes (the
#      job script counts them on each node with srun).
#   4. A job on node0 and node1 leaves its logs pending (bbfs_replay=never);
#      a second job, on node2 and node3, reads the file: its read-only open
#      replays the logs through the first job's nodes' servers, and what it
#      reads equals the ufs: file; no log is left on node0 or node1.
# Every daemon and job runs inside the cluster's namespaces, and the
# cluster goes down at the end, also when a step fails.
#
# Environment: BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="$BUILDDIR/tests/cluster/slurm"
prog="$BUILDDIR/mpiio-tests/t_crashpoints"
readback="$BUILDDIR/tests/cluster/t_readback"
mpiexec="$BUILDDIR/mpich/bin/mpiexec"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
for f in "$prog" "$readback" "$mpiexec" "$BUILDDIR/mpich/bin/bbserver"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (make check builds it)"; exit 1; }
done
# (slurm.sh up says which Slurm or munge program is missing)
rm -rf "$work"; mkdir -p "$work"
export BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120
# bbservers of the node it runs on (the nodes share one process namespace:
# a node's processes are those in its network namespace)
cat > "$work/servers-here.sh" <<'EOF2'
#!/bin/sh
me=$(readlink /proc/self/ns/net) n=0
for p in $(pgrep -x bbserver); do
    [ "$(readlink /proc/$p/ns/net)" = "$me" ] && n=$((n + 1))
done
echo "bbservers here: $n"
EOF2
chmod +x "$work/servers-here.sh"

"$here/slurm.sh" with 4 "$work/c" env work="$work" prog="$prog" readback="$readback" \
    mpiexec="$mpiexec" bash -c '
set -u
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
logs_on() { "'"$here"'/cluster.sh" exec "$CLUSTER_DIR" "$1" sh -c "ls $CLUSTER_DIR/local | grep -c log$" ; }
# submit NAME NODES SCRIPT-BODY: sbatch --wait a job script; its output in
# $work/NAME.out, its exit status returned
submit() {
    local name=$1 nodes=$2
    { echo "#!/bin/bash"
      echo "#SBATCH --job-name=$name --nodes=2 --ntasks=4 --nodelist=$nodes"
      echo "#SBATCH --output=$work/$name.out"
      echo "set -eu"
      echo "export BBFS_LOGDIR=$CLUSTER_DIR/local"
      echo "$3"; } > "$work/$name.sh"
    sbatch --wait --quiet "$work/$name.sh"
}

# 1. srun launching the program directly
if submit srun node0,node1 "srun $prog ufs:$work/ref.dat
srun $prog bbfs:$work/srun.dat
srun -n 2 --ntasks-per-node=1 $work/servers-here.sh" \
   && cmp -s "$work/ref.dat" "$work/srun.dat"; then
    ok "a job script: srun launches the program on 2 nodes, bbfs: equals ufs:"
else sed "s/^/  | /" "$work/srun.out" | tail -15; fail "srun in a job script"; fi
# 3. (counted by that job, one line per node)
if [ "$(grep -cx "bbservers here: 1" "$work/srun.out")" = 2 ]; then
    ok "one bbserver on each of the job'"'"'s nodes"
else sed "s/^/  | /" "$work/srun.out" | tail -5; fail "bbservers per node"; fi

# 2. mpiexec inside the allocation
if submit mpiexec node0,node1 "$mpiexec -n 4 $prog bbfs:$work/mpiexec.dat" \
   && cmp -s "$work/ref.dat" "$work/mpiexec.dat"; then
    ok "mpiexec inside an allocation of 2 nodes: bbfs: equals ufs:"
else sed "s/^/  | /" "$work/mpiexec.out" | tail -15; fail "mpiexec inside an allocation"; fi

# 4. a later job on other nodes reads the first one'"'"'s pending logs
printf "bbfs_replay never\n" > "$work/never.hints"
if submit deferred node0,node1 "ROMIO_HINTS=$work/never.hints srun $prog bbfs:$work/pending.dat" \
   && [ "$(logs_on node0)" -gt 0 ] && [ "$(logs_on node1)" -gt 0 ]; then
    ok "a job leaves its logs pending on node0 and node1"
else sed "s/^/  | /" "$work/deferred.out" | tail -15; fail "the deferred job"; fi
if submit reader node2,node3 "srun $readback $work/ref.dat bbfs:$work/pending.dat"; then
    ok "a job on node2 and node3 reads the pending file: equals ufs: ($(tail -1 "$work/reader.out"))"
else sed "s/^/  | /" "$work/reader.out" | tail -15; fail "the reading job on other nodes"; fi
[ "$(logs_on node0)" = 0 ] && [ "$(logs_on node1)" = 0 ] && ok "its open replayed and removed the logs" \
    || fail "logs left: node0 $(logs_on node0), node1 $(logs_on node1)"

squeue -h | grep -q . && fail "jobs left in the queue: $(squeue -h)"
exit $fails'
rc=$?
[ $rc = 0 ] && echo "PASS" || echo "FAIL ($rc)"
exit $rc
