#!/usr/bin/env bash
# run-mpiio-test.sh SPEC.mpi — run one MPI-level test and compare files.
#
# SPEC names a test program (same basename) and lists, one "key: values" line
# each, the process counts ("nprocs: 1 3 4", default 4) and the bbfs name
# prefixes to try ("variants: bbfs: bbfs:ufs:", default bbfs:).  For every
# process count the program runs once on ufs: as the reference and once per
# variant; each run must exit 0 (the program checks its own reads), and the
# file it leaves must equal the reference byte for byte.
#
# Environment: MPIEXEC, BUILDDIR (set by make check); BBFS_TEST_KEEP=1 keeps
# the work directory of passing tests.
set -u
spec=$1
name=$(basename "$spec" .mpi)
prog="$BUILDDIR/mpiio-tests/$name"
work="$BUILDDIR/mpiio-tests/work/$name"
nprocs=$(sed -n 's/^nprocs:[[:space:]]*//p' "$spec"); nprocs=${nprocs:-4}
variants=$(sed -n 's/^variants:[[:space:]]*//p' "$spec"); variants=${variants:-bbfs:}
timeout_s=${BBFS_TEST_TIMEOUT:-300}

[ -x "$prog" ] || { echo "FAIL: test program $prog is missing (build it with make check)"; exit 1; }
[ -x "$MPIEXEC" ] || { echo "FAIL: mpiexec $MPIEXEC is missing (MPICH not built?)"; exit 1; }

rm -rf "$work"; mkdir -p "$work"
export BBFS_LOGDIR="$work/logs"; mkdir -p "$BBFS_LOGDIR"
status=0

run() {   # run NP PREFIX DIR
    local np=$1 prefix=$2 dir=$3
    mkdir -p "$dir"
    echo "+ $MPIEXEC -n $np $prog ${prefix}$dir/data"
    if ! timeout "$timeout_s" "$MPIEXEC" -n "$np" "$prog" "${prefix}$dir/data" </dev/null >"$dir/out" 2>&1; then
        sed 's/^/  | /' "$dir/out"
        echo "FAIL: $name with $np processes on ${prefix} exited non-zero"
        return 1
    fi
    grep -q "No Errors" "$dir/out" || { sed 's/^/  | /' "$dir/out"; echo "FAIL: $name printed no 'No Errors'"; return 1; }
}

for np in $nprocs; do
    ref="$work/np$np-ufs"
    run "$np" ufs: "$ref" || { status=1; continue; }
    for v in $variants; do
        dir="$work/np$np-$(echo "$v" | tr -c 'a-z0-9\n' '_')"
        run "$np" "$v" "$dir" || { status=1; continue; }
        if [ -e "$ref/data" ] || [ -e "$dir/data" ]; then
            if ! cmp "$ref/data" "$dir/data"; then
                echo "FAIL: $name, $np processes: ${v} file differs from the ufs: reference"
                status=1; continue
            fi
        fi
        echo "ok: $name, $np processes, $v matches ufs: ($(stat -c %s "$dir/data" 2>/dev/null || echo 0) bytes)"
    done
done
[ $status -eq 0 ] && [ "${BBFS_TEST_KEEP:-0}" != 1 ] && rm -rf "$work"
exit $status
