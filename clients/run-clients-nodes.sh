#!/usr/bin/env bash
# run-clients-nodes.sh — PnetCDF's and HDF5's suites (run-clients.sh) with
# their processes spread over emulated nodes, each node with its own
# node-local log directory, as on a cluster: no process can open another
# node's logs, so what crosses nodes goes through bbserver and the replay's
# exchange.
#
# usage: clients/run-clients-nodes.sh [pnetcdf] [hdf5]     (default: both)
#
# Environment: CLIENTS_NODES (default 2), CLIENTS_NODES_MPIEXEC (the
# mpiexec the nodes wrap; default MPI_PREFIX's: tests/ucx-mpiexec for the
# ch4:ucx build), and everything run-clients.sh
# takes (CLIENTS_PREFIX, CLIENTS_ONLY, CLIENTS_EXCLUDE, ...).  The scratch
# directory defaults to $BUILDDIR/clients/work/<prefix>-nodes.  Needs root
# (tests/cluster/cluster.sh).  Sequential programs (PnetCDF's TESTSEQRUN)
# run outside the nodes, on this machine, as a login node's would.
set -u
here=$(cd "$(dirname "$0")" && pwd)
BUILDDIR=${BUILDDIR:-$(pwd)}
MPI_PREFIX=${MPI_PREFIX:-$BUILDDIR/mpich}
PREFIX=${CLIENTS_PREFIX:-bbfs:}
nodes=${CLIENTS_NODES:-2}
work=${CLIENTS_WORK:-$BUILDDIR/clients/work/${PREFIX%%:*}-nodes}

[ "$(id -u)" = 0 ] || { echo "FAIL: emulated nodes need root (tests/cluster/cluster.sh)"; exit 1; }
[ -x "$MPI_PREFIX/bin/mpiexec" ] || { echo "FAIL: $MPI_PREFIX/bin/mpiexec missing (MPICH not built?)"; exit 1; }
mkdir -p "$work"
cluster_dir=$(mktemp -d /tmp/bbfs-clients-nodes.XXXXXX)
trap 'rm -rf "$cluster_dir"' EXIT
echo "on $nodes emulated nodes, node-local logs ($cluster_dir/c/local on each)"
MPIEXEC="${CLIENTS_NODES_MPIEXEC:-$MPI_PREFIX/bin/mpiexec}" "$here/../tests/cluster/cluster.sh" with "$nodes" \
    "$cluster_dir/c" env BUILDDIR="$BUILDDIR" MPI_PREFIX="$MPI_PREFIX" \
    CLIENTS_WORK="$work" CLIENTS_PREFIX="$PREFIX" bash -c \
    'CLIENTS_MPIEXEC=$CLUSTER_DIR/mpiexec CLIENTS_LOGDIR=$CLUSTER_DIR/local exec "$0" "$@"' \
    "$here/run-clients.sh" "$@"
