#!/usr/bin/env bash
# performance.sh — the figures of docs/performance.md: noncontig and
# workloads on one node and on 2 and 3 emulated nodes (tests/cluster), all
# appended to OUT/bench.csv, then PNG plots of it in OUT (noncontig/plot.py).
# Takes about 25 minutes on the 2-core VM; nothing else should run meanwhile.
#
#   noncontig/performance.sh OUT [quick]
#
# quick: a smaller run of everything (a minute or two), to see that it works.
# Run from the build directory (after make); the cluster parts need root.
set -euo pipefail
out=${1:?usage: noncontig/performance.sh OUT [quick]}
quick=${2:-}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
csv=$out/bench.csv
scratch=${TMPDIR:-/tmp}/bbfs-performance
if [ "$quick" = quick ]; then
    nc=(-elmtsize 8,4k -mib 4 -repeat 2 -warm 32)
    wl=(-size 8k,1m -repeat 2 -warm 32)
else
    nc=(-elmtsize 8,64,512,4k,32k -mib 64 -repeat 5)
    wl=(-size 8k,8m -repeat 5)
fi
say() { echo "== $(date +%T) $*"; }

rm -rf "$scratch"; mkdir -p "$scratch/logs"
say "1 node: noncontig"
BBFS_LOGDIR=$scratch/logs "$build/mpich/bin/mpiexec" -n 4 "$build/noncontig/noncontig" \
    -dir "$scratch" "${nc[@]}" -csv "$csv" -label "1 node"
say "1 node: workloads"
BBFS_LOGDIR=$scratch/logs "$build/mpich/bin/mpiexec" -n 4 "$build/noncontig/workloads" \
    -dir "$scratch" "${wl[@]}" -csv "$csv" -label "1 node"
rm -rf "$scratch"

for nodes in 2 3; do
    # 2 processes per node, placed in blocks (node0 has ranks 0 and 1), so
    # that cc-r's and cs-r's writers (the first half) and readers mostly sit
    # on different nodes, as in the paper
    np=$((2 * nodes))
    hosts=$(seq -s, -f 'node%g:2' 0 $((nodes - 1)))
    cdir=${TMPDIR:-/tmp}/bbfs-performance-cluster
    rm -rf "$cdir"
    say "$nodes nodes: noncontig and workloads ($np processes)"
    # (node-local logs on the disk, as the one-node run's are: on this VM
    # tmpfs writes run at half the speed of the disk's page cache)
    CLUSTER_LOCAL=disk CLUSTER_HOSTS=$hosts "$top/tests/cluster/cluster.sh" with "$nodes" "$cdir" env NC="${nc[*]}" WL="${wl[*]}" \
        CSV="$csv" NP="$np" NODES="$nodes" BUILD="$build" sh -c '
        export BBFS_LOGDIR=$CLUSTER_DIR/local
        mkdir -p $CLUSTER_DIR/files
        $CLUSTER_DIR/mpiexec -n $NP $BUILD/noncontig/noncontig -dir $CLUSTER_DIR/files $NC \
            -csv $CSV -label "$NODES nodes" &&
        $CLUSTER_DIR/mpiexec -n $NP $BUILD/noncontig/workloads -dir $CLUSTER_DIR/files $WL \
            -csv $CSV -label "$NODES nodes"'
    rm -rf "$cdir"
done
say "plots"
/usr/bin/python3 "$top/noncontig/plot.py" "$csv" -o "$out"
