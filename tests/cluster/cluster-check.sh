#!/usr/bin/env bash
# cluster-check.sh — the emulated cluster (cluster.sh) works and cleans up:
# on 2 and 3 nodes, t_nodes finds distinct hosts, per-node shared-memory
# groups and private node-local storage, with TCP between the nodes; then
# bbfs tests (ours, then ROMIO's) run across the nodes with a log directory
# every node shares, and again on 2 nodes with each node's own log
# directory (so through bbserver; 3 nodes: the shorter list), but for
# t_badlog and t_reopen, which
# open every process's logs from process 0 to damage or count them.
# With CLUSTER_LOCAL=disk (2 nodes), t_nodes again: node-local storage on
# the disk, still private, and removed by down.
# After each cluster, and after one whose command fails and one that is
# killed, nothing of it is left: no namespace holder, no interface in this
# network namespace, no mount.
#
# Environment: MPIEXEC, BUILDDIR, MPI_PREFIX (set by make check); CLUSTER_TESTS_2 and
# CLUSTER_TESTS_3, the mpiio-tests specs to run across 2 and 3 nodes
# (default: every spec but the 2 and 4 GiB ones on 2 nodes, and those that
# sync, replay, reopen, delete or crash on 3); CLUSTER_CHECK_SHARED_LOGS=no
# leaves out the runs with a log directory every node shares (make
# check-ucx: the MPI device's paths are the same for both, and the runs on
# node-local logs are the deployment's).
set -u
here=$(cd "$(dirname "$0")" && pwd)
cluster="$here/cluster.sh"
work="$BUILDDIR/tests/cluster/work"
t_nodes="$BUILDDIR/tests/cluster/t_nodes"
fails=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails+1)); fi
}
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root (namespaces, veth, mounts)"; exit 1; }
for t in unshare nsenter ip; do
    command -v $t >/dev/null || { echo "FAIL: $t is missing (tools/install-deps.sh installs it)"; exit 1; }
done
[ -x "$t_nodes" ] || { echo "FAIL: $t_nodes is missing (make check builds it)"; exit 1; }

leftovers() {   # what a cluster below $1 could leave behind, one count each
    ip -o link show | grep -c -E 'veth|br0' || true
    pgrep -f "^bbfs-cluster-holder $1/" | wc -l
    grep -c " $1" /proc/mounts || true
}

rm -rf "$work"; mkdir -p "$work"
before=$(leftovers "$work")
export MPIEXEC
all_specs=$(cd "$here/../../mpiio-tests" && ls t_*.mpi | sed 's/\.mpi$//' | grep -v -E '^t_(replay_[24]g|huge_.*)$' | tr '\n' ' ')
specs_2=${CLUSTER_TESTS_2:-$all_specs}
specs_3=${CLUSTER_TESTS_3:-"t_epochs t_consistency t_reopen t_delete t_crash t_random_replay t_replay_rounds_tool t_collorder t_handles"}
shared_logs=${CLUSTER_CHECK_SHARED_LOGS:-yes}
case $shared_logs in
    yes) ;;
    no) echo "(CLUSTER_CHECK_SHARED_LOGS=no: no runs with a shared log directory)" ;;
    *) echo "FAIL: CLUSTER_CHECK_SHARED_LOGS is yes or no, not $shared_logs"; exit 1 ;;
esac

for n in 2 3; do
    if [ $n = 2 ]; then specs=$specs_2; else specs=$specs_3; fi
    [ "$shared_logs" = yes ] || specs=
    dir="$work/c$n"
    out="$work/c$n.out"
    "$cluster" with "$n" "$dir" sh -c '
        set -u
        "$CLUSTER_DIR/mpiexec" -n '$((2 * n))' "'"$t_nodes"'" '$n' "$CLUSTER_DIR/local" || exit 10
        for s in '"$specs"'; do
            MPIEXEC="$CLUSTER_DIR/mpiexec" BUILDDIR="'"$BUILDDIR"'" BBFS_TEST_WORK_SUFFIX=-c'$n' \
                "'"$BUILDDIR"'/mpiio-tests/run-mpiio-test.sh" "'"$BUILDDIR"'/mpiio-tests/$s.mpi" \
                > "'"$work"'/c'$n'-$s.out" 2>&1 || { echo "$s failed"; exit 11; }
            echo "$s passed"
        done' > "$out" 2>&1
    rc=$?
    check "$n nodes: t_nodes (hosts, shared-memory groups, private node-local storage)" \
        test "$rc" != 10
    for s in $specs; do
        check "$n nodes: $s across nodes, log directory shared (see $work/c$n-$s.out)" \
            grep -q "^$s passed" "$out"
        check "$n nodes: $s ran through the cluster's mpiexec" \
            grep -q "^+ .*$dir/mpiexec -n" "$work/c$n-$s.out"
    done
    check "$n nodes: nothing left after the cluster" test "$(leftovers "$work")" = "$before"
done

# Node-local storage on the disk (CLUSTER_LOCAL=disk, for benchmarks):
# still private to each node, no longer tmpfs, and gone after down.
CLUSTER_LOCAL=disk "$cluster" with 2 "$work/cd" sh -c '
    "$CLUSTER_DIR/mpiexec" -n 4 "'"$t_nodes"'" 2 "$CLUSTER_DIR/local" || exit 10
    for node in node0 node1; do
        fs=$("'"$cluster"'" exec "$CLUSTER_DIR" $node stat -f -c %T "$CLUSTER_DIR/local")
        [ "$fs" != tmpfs ] || { echo "$node: local is $fs"; exit 11; }
    done' > "$work/cd.out" 2>&1
rc=$?
check "2 nodes, CLUSTER_LOCAL=disk: t_nodes (private node-local storage; see $work/cd.out)" \
    test "$rc" != 10
check "2 nodes, CLUSTER_LOCAL=disk: node-local storage is not tmpfs" test "$rc" = 0
check "2 nodes, CLUSTER_LOCAL=disk: nothing left after the cluster" \
    test "$(leftovers "$work")" = "$before" -a ! -e "$work/cd/.disks"

# Every spec but those two again on 2 nodes, and the 3-node list on 3, each
# node with its own logs.
drop_nl() { echo "$1" | tr ' ' '\n' | grep -v -E '^(t_badlog|t_reopen)$' | tr '\n' ' '; }
for n in 2 3; do
    if [ $n = 2 ]; then specs_nl=${CLUSTER_TESTS_NODELOCAL:-$(drop_nl "$specs_2")}
    else specs_nl=$(drop_nl "$specs_3"); fi
    "$cluster" with $n "$work/nl$n" sh -c '
        for s in '"$specs_nl"'; do
            MPIEXEC="$CLUSTER_DIR/mpiexec" BUILDDIR="'"$BUILDDIR"'" BBFS_TEST_WORK_SUFFIX=-nl'$n' \
                BBFS_TEST_LOGDIR="$CLUSTER_DIR/local" \
                "'"$BUILDDIR"'/mpiio-tests/run-mpiio-test.sh" "'"$BUILDDIR"'/mpiio-tests/$s.mpi" \
                > "'"$work"'/nl'$n'-$s.out" 2>&1 && echo "$s passed" || echo "$s failed"
        done' > "$work/nl$n.out" 2>&1
    for s in $specs_nl; do
        check "$n nodes: $s across nodes, node-local logs (see $work/nl$n-$s.out)" \
            grep -q "^$s passed" "$work/nl$n.out"
    done
    check "$n nodes, node-local logs: nothing left after the cluster" \
        test "$(leftovers "$work")" = "$before"
done

# ROMIO's own tests across 2 nodes (their logs in the shared /tmp, then in
# each node's own directory).
if [ "$shared_logs" = yes ]; then
"$cluster" with 2 "$work/romio" sh -c '
    MPIEXEC="$CLUSTER_DIR/mpiexec" ROMIO_TESTS_OUT="'"$work"'/romio-out" \
        "'"$here"'/../../mpiio-tests/romio-tests.sh"' > "$work/romio.out" 2>&1
rc=$?
check "2 nodes: ROMIO's tests on ufs: and bbfs: (see $work/romio.out)" test "$rc" = 0
check "2 nodes: ROMIO's tests ran through the cluster's mpiexec" \
    grep -q "ROMIO tests: [1-9][0-9]* passed, 0 failed" "$work/romio.out"
check "2 nodes: nothing left after the ROMIO tests" test "$(leftovers "$work")" = "$before"
fi
"$cluster" with 2 "$work/romio-nl" sh -c '
    BBFS_LOGDIR="$CLUSTER_DIR/local" MPIEXEC="$CLUSTER_DIR/mpiexec" \
        ROMIO_TESTS_OUT="'"$work"'/romio-nl-out" \
        "'"$here"'/../../mpiio-tests/romio-tests.sh"' > "$work/romio-nl.out" 2>&1
rc=$?
check "2 nodes, node-local logs: ROMIO's tests on ufs: and bbfs: (see $work/romio-nl.out)" \
    test "$rc" = 0
check "2 nodes, node-local logs: ROMIO's tests ran" \
    grep -q "ROMIO tests: [1-9][0-9]* passed, 0 failed" "$work/romio-nl.out"
check "2 nodes, node-local logs: nothing left after the ROMIO tests" \
    test "$(leftovers "$work")" = "$before"

# A failing command, and a killed cluster, clean up all the same.
"$cluster" with 2 "$work/fail" false; rc=$?
check "a failing command's status comes back" test "$rc" = 1
check "nothing left after a failing command" test "$(leftovers "$work")" = "$before"
"$cluster" with 2 "$work/killed" sleep 60 & pid=$!
sleep 2; kill -TERM $pid; wait $pid 2>/dev/null
check "nothing left after the cluster is killed" test "$(leftovers "$work")" = "$before"

[ $fails = 0 ] && rm -rf "$work"
exit $((fails > 0))
