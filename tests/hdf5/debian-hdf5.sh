#!/usr/bin/env bash
# debian-hdf5.sh — Debian's own parallel HDF5 (libhdf5-mpich, built against
# Debian's MPICH 4.0.2) runs unmodified on the bbfs MPICH: an HDF5 program
# built with h5pcc.mpich writes through bbfs (bbfs:, deferred replay given
# through H5Pset_fapl_mpio's info, and ROMIO_FSTYPE_FORCE with plain paths,
# all through bbfs-run); h5dump reads each file after close and h5diff finds
# it equal to the same run on ufs:; and the same across 2 emulated nodes.
#
# Environment: MPI_PREFIX, BUILDDIR, MPIEXEC (set by make check).
set -u
src=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$src/../.." && pwd)
work="$BUILDDIR/tests/hdf5/work"
run="$top/tools/bbfs-run"
fails=0
check() {   # check DESCRIPTION COMMAND...: the command must succeed
    local what=$1; shift
    if "$@" >"$work/last.out" 2>&1; then echo "ok: $what"
    else sed 's/^/  | /' "$work/last.out"; echo "FAIL: $what"; fails=$((fails+1)); fi
}

for t in h5pcc.mpich h5dump h5diff; do
    command -v $t >/dev/null || { echo "FAIL: $t is missing: install libhdf5-mpich-dev and hdf5-tools (tools/install-deps.sh does)"; exit 1; }
done
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="$work/logs" BBFS_MPICH="$MPI_PREFIX"
prog="$work/h5_checkpoint"
h5pcc.mpich -o "$prog" "$src/h5_checkpoint.c" >"$work/build.out" 2>&1 \
    || { cat "$work/build.out"; echo "FAIL: h5pcc.mpich could not build the example"; exit 1; }

lib=$(eval "$("$run" --env)"; ldd "$prog" | sed -n 's/.*libmpich.so.12 => \([^ ]*\).*/\1/p')
check "the Debian-built program loads the bbfs MPICH ($lib)" \
    test "$(readlink -f "$lib")" = "$(readlink -f "$MPI_PREFIX/lib/libmpich.so.12")"

h5run() { timeout 300 "$run" "$@" </dev/null; }
check "write on ufs: (the reference)" h5run -n 4 "$prog" write "ufs:$work/ref.h5"
check "write on bbfs:" h5run -n 4 "$prog" write "bbfs:$work/bb.h5"
check "read back on bbfs:" h5run -n 4 "$prog" read "bbfs:$work/bb.h5"
check "h5dump reads the bbfs file after close" h5dump -H "$work/bb.h5"
check "h5diff: the bbfs file equals the ufs: one" h5diff "$work/ref.h5" "$work/bb.h5"

# Deferred replay through H5Pset_fapl_mpio's info: HDF5 grows the file at
# H5Fclose (a logged set_size), and the logs stay pending.
check "write with bbfs_replay=on_read_open in the fapl's info" \
    h5run -n 4 "$prog" write "bbfs:$work/deferred.h5" bbfs_replay=on_read_open
check "the logs are pending after H5Fclose" ls "$work/.deferred.h5.bbfs/"
check "the canonical file is untouched until the replay" test ! -s "$work/deferred.h5"
check "a read-only open replays them and reads every value" \
    h5run -n 3 "$prog" read "bbfs:$work/deferred.h5"
check "no manifest is left after the replay" test ! -e "$work/.deferred.h5.bbfs"
check "h5diff: the replayed file equals the ufs: one" h5diff "$work/ref.h5" "$work/deferred.h5"

# Zero change: plain paths, ROMIO_FSTYPE_FORCE=bbfs:, a hint from bbfs-run.
check "write with plain paths under --force" \
    h5run --force --hint bbfs_replay=never -n 4 "$prog" write "$work/plain.h5"
check "--force put the plain-path file on bbfs (its logs are pending)" ls "$work/.plain.h5.bbfs/"
check "read back under --force (replays)" h5run --force -n 2 "$prog" read "$work/plain.h5"
check "h5diff: the plain-path file equals the ufs: one" h5diff "$work/ref.h5" "$work/plain.h5"
check "h5dump shows the fill values HDF5 wrote before the data" \
    sh -c "h5dump -d chunked -s 600 -c 1 '$work/plain.h5' | grep -q -- '-7.25'"

# Across 2 emulated nodes (tests/cluster/cluster.sh: root), each with its
# own node-local log directory: the deferred write leaves each node's logs
# on that node, and a read-only open on 3 processes replays them through
# the node servers, then reads every value.  (MPIEXEC, set by make check,
# is the mpiexec the nodes wrap: tests/ucx-mpiexec under make check-ucx.)
nodes_run() {   # nodes_run PROG FILE: both runs on the nodes, as bbfs-run sets them up
    "$top/tests/cluster/cluster.sh" with 2 "$work/c2" bash -c '
        eval "$("$0" --env)" && export BBFS_LOGDIR=$CLUSTER_DIR/local &&
        timeout 300 "$CLUSTER_DIR/mpiexec" -n 4 "$1" write "bbfs:$2" bbfs_replay=on_read_open &&
        timeout 300 "$CLUSTER_DIR/mpiexec" -n 3 "$1" read "bbfs:$2"' "$run" "$@" </dev/null
}
if [ "$(id -u)" = 0 ]; then
    check "across 2 nodes: a deferred write, then a read-only open replays and reads it" \
        nodes_run "$prog" "$work/nodes.h5"
    check "h5diff: the 2-node file equals the ufs: one" h5diff "$work/ref.h5" "$work/nodes.h5"
else
    echo "FAIL: the 2-node part needs root (emulated nodes: tests/cluster/cluster.sh)"
    fails=$((fails+1))
fi

# The HDF5 benchmark's programs (small sizes: no timing is checked): the
# strided dataset with independent transfers and the 3-D hyperslabs with
# collective ones, each read back and checked by the program on ufs:, bbfs:
# and bbfs: with bbfs_replay=never.
check "h5-bench.sh: both kinds, every mode, data read back right" \
    bash -c '"$@" >"$0" 2>&1 && test "$(grep -c ": .* ok$" "$0")" -eq 6' "$work/h5-bench.out" \
    "$top/noncontig/h5-bench.sh" -r 1 -e 4096 -c 16 -d "$work/h5-bench"

[ $fails -eq 0 ] && rm -rf "$work"
echo "debian-hdf5: $fails failed"
[ $fails -eq 0 ]
