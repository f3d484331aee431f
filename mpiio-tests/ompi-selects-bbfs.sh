#!/usr/bin/env bash
# ompi-selects-bbfs.sh — on Open MPI, a bbfs: name, or ROMIO_FSTYPE_FORCE=bbfs:,
# selects ROMIO by itself, with no --mca io romio341
# (adio/ompi-patches/ompi-romio-selects-bbfs.patch).  Runs t_info on a
# bbfs: name and t_force under the variable with Open MPI's own mpiexec
# (not the tests' wrapper, which asks for ROMIO): each checks in
# MPI_File_get_info that its files are bbfs files, so under ompio they fail.
# make check-ompi runs it.
#
# Environment: MPI_PREFIX, BUILDDIR (set by make check).
set -u
mpiexec="$MPI_PREFIX/bin/mpiexec"
work="$BUILDDIR/mpiio-tests/work/ompi-selects-bbfs"
[ -x "$mpiexec" ] || { echo "FAIL: $mpiexec is missing"; exit 1; }
"$mpiexec" --version 2>&1 | grep -q "Open MPI" \
    || { echo "FAIL: $mpiexec is not Open MPI's (this test is for make check-ompi)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/logs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 BBFS_LOGDIR="$work/logs"
status=0
run() {   # run WHAT ENV... -- PROGRAM ARGS...
    local what=$1; shift
    echo "+ $*"
    if ! env "$@" </dev/null >"$work/out" 2>&1; then
        sed 's/^/  | /' "$work/out" | tail -15
        echo "FAIL: $what"; status=1
    else
        echo "ok: $what"
    fi
}
run "a bbfs: name selects ROMIO and bbfs (t_info)" \
    timeout 300 "$mpiexec" --oversubscribe -n 4 "$BUILDDIR/mpiio-tests/t_info" "bbfs:$work/named"
run "ROMIO_FSTYPE_FORCE=bbfs: selects ROMIO and bbfs for a plain name (t_force)" \
    ROMIO_FSTYPE_FORCE=bbfs: timeout 300 "$mpiexec" --oversubscribe -x ROMIO_FSTYPE_FORCE \
    -n 4 "$BUILDDIR/mpiio-tests/t_force" "$work/forced"
[ $status -eq 0 ] && rm -rf "$work"
exit $status
