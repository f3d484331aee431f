# crashpoints-lib.sh — sourced by crash-matrix.sh and fault-errors.sh: the
# set-up around t_crashpoints and the judgement of a recovered file.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).

# cp_setup NAME: programs, a fresh work directory NAME, BBFS_LOGDIR in it,
# the hints files (small replay rounds, so that a replay has several; and
# a deferred variant), and the ufs: reference file $work/ref.dat.
cp_setup() {
    prog="$BUILDDIR/mpiio-tests/t_crashpoints"
    tool="$BUILDDIR/tools/bbfs-replay"
    work="$BUILDDIR/mpiio-tests/work/$1"
    np=4
    status=0
    table=""
    [ -x "$prog" ] || { echo "FAIL: $prog is missing (make check builds it)"; exit 1; }
    [ -x "$tool" ] || { echo "FAIL: $tool is missing (make check builds it)"; exit 1; }
    [ -x "$MPIEXEC" ] || { echo "FAIL: mpiexec $MPIEXEC is missing (MPICH not built?)"; exit 1; }
    rm -rf "$work"; mkdir -p "$work"
    export BBFS_LOGDIR="$work/logs"
    # The servers rows that force the path across nodes start: gone with
    # the test, and before a row removes their log directory (they would
    # wait out their idle limit on a directory that is no more).
    export BBFS_SERVER_IDLE="${BBFS_SERVER_IDLE:-20}"
    trap cp_stop_servers EXIT
    printf 'bbfs_replay_buffer 65536\n' > "$work/close.hints"
    printf 'bbfs_replay_buffer 65536\nbbfs_replay never\n' > "$work/deferred.hints"
    "$MPIEXEC" -n $np "$prog" "ufs:$work/ref.dat" </dev/null >"$work/ref.out" 2>&1 \
        || { cat "$work/ref.out"; echo "FAIL: the ufs: reference run failed"; exit 1; }
}

fail() { echo "FAIL: $*"; status=1; }

cp_stop_servers() { pkill -f "bbserver --logdir $BBFS_LOGDIR " 2>/dev/null; return 0; }

# cp_judge WHAT DIR VERIFY: DIR/data.dat holds every block a completed sync
# or close covered (VERIFY judged), or is the whole reference (--exact).
# Sets covered to the epochs covered, by process.
cp_judge() {
    local what=$1 dir=$2 verify=$3
    if ! "$prog" --verify "$dir/data.dat" ${verify/judged/} >"$dir/verify.out" 2>&1; then
        sed 's/^/  | /' "$dir/verify.out"; fail "$what: the file is wrong"; return 1
    fi
    if [ "$verify" = --exact ] && ! cmp "$work/ref.dat" "$dir/data.dat"; then
        fail "$what: the file differs from the ufs: reference"; return 1
    fi
    covered=$(sed -n 's/.*(\(.*\) by process).*/\1/p' "$dir/verify.out")
}
