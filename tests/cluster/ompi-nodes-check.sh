#!/usr/bin/env bash
# ompi-nodes-check.sh — MPI tests across 2 emulated nodes on Open MPI, each
# node with its own log directory (its node-local tmpfs, cluster.sh): PRRTE
# starts its daemons through the cluster's stand-in for ssh.  Each program
# runs on ufs: and on bbfs: (ROMIO for both, --mca io romio341), 2
# processes a node; each run must print " No Errors" and the files must be
# equal byte for byte.
#   t_mpi_sync   MPI's synchronization makes writes visible (the hooks),
#                readers on the other node read through its server
#   t_lognames   log names of every length, others' logs read through the
#                servers, the close replays every node's logs
#   t_epochs     epochs of noncontiguous writes, replayed at close
# make check-ompi runs it (root: the cluster needs namespaces).
#
# Environment: MPI_PREFIX, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="$BUILDDIR/tests/cluster/ompi-nodes"
mpiexec="$MPI_PREFIX/bin/mpiexec"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
"$mpiexec" --version 2>&1 | grep -q "Open MPI" \
    || { echo "FAIL: $mpiexec is not Open MPI's (this test is for make check-ompi)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/files"

# one job across the nodes: run_job CLUSTER_DIR PROGRAM NAME
run_job() {
    nsenter -t "$(cat "$1/head.pid")" --mount --uts --ipc --net --wd="$work" -- \
        env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        timeout 300 "$mpiexec" --prtemca plm_ssh_agent "$1/rsh" --host node0:2,node1:2 \
        --map-by node --mca io romio341 --mca osc '^ucx' -x BBFS_LOGDIR="$1/local" \
        -n 4 "$BUILDDIR/mpiio-tests/$2" "$3" </dev/null
}

in_cluster() {
    local c=$CLUSTER_DIR status=0 t p
    for t in t_mpi_sync t_lognames t_epochs; do
        for p in ufs: bbfs:; do
            if ! run_job "$c" "$t" "$p$work/files/$t.${p%:}" >"$work/$t.${p%:}.out" 2>&1 \
               || ! grep -q "No Errors" "$work/$t.${p%:}.out"; then
                sed 's/^/  | /' "$work/$t.${p%:}.out" | grep -v "OSC UCX component priority" | tail -15
                echo "FAIL: $t on $p across 2 nodes"; status=1; continue 2
            fi
        done
        if cmp "$work/files/$t.ufs" "$work/files/$t.bbfs"; then
            echo "ok: $t across 2 nodes, bbfs: equals ufs:"
        else
            echo "FAIL: $t across 2 nodes: the bbfs: file differs from ufs:'s"; status=1
        fi
    done
    return $status
}
export -f run_job in_cluster
export work mpiexec BUILDDIR

"$here/cluster.sh" with 2 "$work/cluster" bash -c in_cluster
status=$?
[ $status -eq 0 ] && rm -rf "$work"
exit $status
