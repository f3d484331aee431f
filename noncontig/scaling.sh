#!/usr/bin/env bash
# scaling.sh — the runs docs/performance.md's scaling model is checked
# against: noncontig with a fixed share per process (weak scaling; 8-byte
# elements, -veclen per process) at 1, 2, 4 and 8 processes on one node and
# at 2 processes per node on 2 and 3 emulated nodes, each with bbfs_timing's
# breakdown; then 4 processes with 8 B, 64 B and 4 KiB elements (the same
# bytes), and model-cost's steps at 1, 4, 16 and 64 epochs (the same bytes
# in all); CSV rows into OUT/bench.csv, the full output in OUT/scaling-*.txt,
# and at the end every bbfs_timing breakdown and count line, by run.
#
#   noncontig/scaling.sh OUT [VECLEN]      (default VECLEN 1048576: 8 MiB each)
#
# Run from the build directory (after make); the cluster parts need root.
set -euo pipefail
out=${1:?usage: noncontig/scaling.sh OUT [VECLEN]}
veclen=${2:-1048576}
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
scratch=${TMPDIR:-/tmp}/bbfs-scaling
args=(-elmtsize 8 -veclen "$veclen" -repeat 3 -warm 128 -breakdown yes -csv "$out/bench.csv")
for np in 1 2 4 8; do
    rm -rf "$scratch"; mkdir -p "$scratch/logs"
    echo "== $(date +%T) 1 node, $np processes"
    BBFS_LOGDIR=$scratch/logs "$build/mpich/bin/mpiexec" -n "$np" "$build/noncontig/noncontig" \
        -dir "$scratch" "${args[@]}" -label "scaling 1 node" >"$out/scaling-1node-${np}p.txt" 2>&1
done
for e in 64 4096; do
    rm -rf "$scratch"; mkdir -p "$scratch/logs"
    echo "== $(date +%T) 1 node, 4 processes, $e-byte elements"
    BBFS_LOGDIR=$scratch/logs "$build/mpich/bin/mpiexec" -n 4 "$build/noncontig/noncontig" \
        -dir "$scratch" "${args[@]}" -elmtsize "$e" -veclen $((veclen * 8 / e)) \
        -label "scaling 1 node" >"$out/scaling-1node-4p-$e.txt" 2>&1
done
# epochs: model-cost's steps, each a collective write and read with a sync
# between (mpiio), 2 epochs a step; bbfs_timing through ROMIO_HINTS
echo "bbfs_timing true" >"$scratch/hints"
for steps in 1 4 16 64; do
    rm -rf "$scratch/logs"; mkdir -p "$scratch/logs"
    echo "== $(date +%T) 1 node, 4 processes, $steps steps"
    ROMIO_HINTS=$scratch/hints BBFS_LOGDIR=$scratch/logs "$build/mpich/bin/mpiexec" -n 4 \
        "$build/noncontig/model-cost" -dir "$scratch" -steps "$steps" \
        -veclen $((veclen / steps)) -repeats 3 >"$out/scaling-1node-4p-${steps}steps.txt" 2>&1
done
rm -rf "$scratch"
for nodes in 2 3; do
    cdir=${TMPDIR:-/tmp}/bbfs-scaling-cluster
    rm -rf "$cdir"
    np=$((2 * nodes))
    echo "== $(date +%T) $nodes nodes, $np processes"
    CLUSTER_HOSTS=$(seq -s, -f 'node%g:2' 0 $((nodes - 1))) \
        "$top/tests/cluster/cluster.sh" with "$nodes" "$cdir" env NP="$np" BUILD="$build" \
        ARGS="${args[*]}" LABEL="scaling $nodes nodes" sh -c '
        export BBFS_LOGDIR=$CLUSTER_DIR/local
        mkdir -p $CLUSTER_DIR/files
        $CLUSTER_DIR/mpiexec -n $NP $BUILD/noncontig/noncontig -dir $CLUSTER_DIR/files $ARGS \
            -label "$LABEL"' >"$out/scaling-${nodes}node-${np}p.txt" 2>&1
    rm -rf "$cdir"
done
grep -H "^bbfs \(timing\|counts\)" "$out"/scaling-*.txt | sed 's|^.*/scaling-||'
