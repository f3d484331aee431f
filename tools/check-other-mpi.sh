#!/usr/bin/env bash
# check-other-mpi.sh — build this checkout against another MPI library and
# run tests there (make check-ompi).
#
# usage: tools/check-other-mpi.sh MPI TREE [make check arguments...]
#        tools/check-other-mpi.sh MPI TREE --build-only
#
# MPI is a value of configure's --with-mpi (openmpi).  The project builds
# in place, so the other build is a copy of this checkout's files (those
# git knows of, committed or not) in TREE, configured --with-mpi=MPI.  The
# copy keeps the files' times, so a second run rebuilds only what changed.
# The MPI library itself is built and cached by its tools/build-*.sh as
# usual.  Prints the tree's test-suite.log when tests fail.
set -euo pipefail

MPI=${1:?usage: check-other-mpi.sh MPI TREE [make check arguments...]}
TREE=${2:?usage: check-other-mpi.sh MPI TREE [make check arguments...]}
shift 2
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
log() { printf '[check-other-mpi] %s\n' "$*" >&2; }

command -v git >/dev/null && git -C "$TOPDIR" rev-parse --git-dir >/dev/null 2>&1 \
    || { log "$TOPDIR is not a git checkout: the copy for $MPI is made of the files git knows of"; exit 1; }
mkdir -p "$TREE"
( cd "$TOPDIR" && git ls-files -z --cached --others --exclude-standard \
      | xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh \
      | tar --null -T - --ignore-failed-read -cf - ) | tar -xf - -C "$TREE"

cd "$TREE"
if [ ! -f config.status ] || [ configure.ac -nt config.status ]; then
    log "configuring a build with --with-mpi=$MPI in $TREE"
    autoreconf -fi >autoreconf.out 2>&1 || { cat autoreconf.out >&2; exit 1; }
    ./configure --with-mpi="$MPI" >configure.out 2>&1 \
        || { tail -20 configure.out >&2; log "configure failed, see $TREE/configure.out"; exit 1; }
fi
log "building in $TREE"
make -j"${BBFS_JOBS:-$(nproc)}" >make.out 2>&1 \
    || { grep -E 'error|Error' make.out | head -30 >&2; log "build failed, see $TREE/make.out"; exit 1; }
[ "${1:-}" != --build-only ] || exit 0
log "testing in $TREE"
make check "$@"
