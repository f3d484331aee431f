#!/usr/bin/env bash
# soak-nodes.sh — the soak (mpiio-tests/soak.sh) across 2 emulated nodes,
# each process logging to its node's own storage: 8 processes, 4 a node,
# t_random's random writes and reads (half the reads of another node's
# data, through that node's bbserver), as many sync-barrier-sync epochs as
# fit in SOAK_SECONDS (default 20 here).  The file must equal a ufs: run's;
# resident memory and open file descriptors must stay flat (soak.sh says
# how flat; the read cache is made small so that it is full by then).
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
here=$(cd "$(dirname "$0")" && pwd)
work="$BUILDDIR/tests/cluster/soak-nodes"
[ "$(id -u)" = 0 ] || { echo "FAIL: the emulated cluster needs root"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
export BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_IDLE=120
# A read cache of 2 chunks (bbfs_read_cache 2m, not 16m): it fills in the
# first epochs, so that what grows after epoch 10 is a leak, not the cache.
printf 'bbfs_read_cache 2m\n' > "$work/hints"
export ROMIO_HINTS="$work/hints"
"$here/cluster.sh" with 2 "$work/c" sh -c \
    'MPIEXEC=$CLUSTER_DIR/mpiexec SOAK_LOGDIR=$CLUSTER_DIR/local SOAK_NAME=soak-nodes \
     SOAK_SECONDS=${SOAK_SECONDS:-20} "$0"' "$here/../../mpiio-tests/soak.sh"
rc=$?
[ $rc = 0 ] && rm -rf "$work"
exit $rc
