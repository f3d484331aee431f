#!/usr/bin/env bash
# clock-skew.sh — writes that MPI orders keep their order when a node's
# clock is off.
#
# On 2 emulated nodes with node-local logs, t_clock_skew runs with node1's
# clock (its processes' and its bbserver's) 5 s behind, then 5 s ahead,
# then right: a write on one node, sync, barrier, sync, then a write of the
# same bytes on the other node through another handle of the file (two
# sessions, replayed in one plan by their stamps); and the same under
# bbfs_consistency posix, and with default hints (causal), with only a
# barrier between the writes; and through two handles on MPI_COMM_SELF,
# which find their servers only at their first release; and through a
# second handle opened after the first's writes were synced, whose first
# writes stamp with the clock its open heard.  The
# later write must win each time, in reads before the close and in the
# file after it, and the file must equal a ufs: run's.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="$BUILDDIR/tests/cluster/clock-skew"
prog="$BUILDDIR/tests/cluster/t_clock_skew"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
[ -x "$prog" ] || { echo "FAIL: $prog is missing (make check builds it)"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
export BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120

"$here/cluster.sh" with 2 "$work/c" env work="$work" prog="$prog" bash -c '
set -u
fails=0
export BBFS_LOGDIR=$CLUSTER_DIR/local
run() { CLUSTER_HOSTS=node0,node1 timeout 120 "$CLUSTER_DIR/mpiexec" -n 4 "$prog" "$@" </dev/null; }
run "ufs:$work/ref" 0 > "$work/ref.out" 2>&1 || { cat "$work/ref.out"; echo "FAIL: the ufs: run"; exit 1; }
for skew in -5000000000 5000000000 0; do
    rm -f "$work"/f*
    if run "bbfs:$work/f" "$skew" > "$work/run.out" 2>&1 \
       && cmp -s "$work/ref" "$work/f" && cmp -s "$work/ref.posix" "$work/f.posix" \
       && cmp -s "$work/ref.causal" "$work/f.causal" && cmp -s "$work/ref.self" "$work/f.self" \
       && cmp -s "$work/ref.late" "$work/f.late"; then
        echo "ok: node1 ${skew} ns off: the later writes win, the files equal ufs:"
    else
        grep "FAIL" "$work/run.out" | sed "s/^/  | /" | sort -u | head -24
        echo "FAIL: node1 ${skew} ns off"; fails=$((fails+1))
    fi
done
exit $((fails > 0))'
rc=$?
[ $rc = 0 ] && rm -rf "$work"
exit $rc
