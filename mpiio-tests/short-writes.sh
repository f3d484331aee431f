#!/usr/bin/env bash
# short-writes.sh — every write bbfs makes itself, cut short by the kernel.
#
# A write(2) may move fewer bytes than asked (a signal, a nearly full
# device, a network file system, any call of more than 0x7ffff000 bytes);
# bbfs must finish the rest itself, at the right offset.  Each row runs the
# crash matrix's writer, t_crashpoints, with 4 processes on bbfs: and one
# write fault point armed in every process with a short action
# (logfs/fault.h): from its first pass on, every write there moves half of
# its bytes (short), one byte (short1) or all but one (short-1) in its
# first system call.  The points are the datalog's (buffered, direct and
# vectored appends), the metalog's, the seal's and the manifest's.  A row
# passes when the point was reached (its line is in the output), the job
# exits 0 with every read checked, and the file is
# equal to the ufs: run's byte for byte,
#   - close: the close replays;
#   - deferred: the close leaves the logs pending (the manifest is
#     rewritten); bbfs-inspect finds each log sealed at its close with all
#     its data; and bbfs-replay, under the same fault, replays them.
# bbserver's state file (point state-write) is covered by the unit tests
# (BbsState.SavesWholeUnderShortWrites).
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
. "$(dirname "$0")/crashpoints-lib.sh"
cp_setup short-writes

# row POINT ACTION MODE
row() {
    local point=$1 action=$2 mode=$3
    local dir="$work/$point-$action-$mode" fault="$point:$action"
    local f="$dir/data.dat"
    rm -rf "$dir" "$BBFS_LOGDIR"; mkdir -p "$dir" "$BBFS_LOGDIR"
    echo "+ BBFS_FAULT=$fault mpiexec -n $np t_crashpoints bbfs:$f ($mode)"
    BBFS_FAULT="$fault" ROMIO_HINTS="$work/$mode.hints" timeout 120 \
        "$MPIEXEC" -n $np "$prog" "bbfs:$f" </dev/null >"$dir/run.out" 2>&1
    local rc=$?
    if [ $rc -ne 0 ] || ! grep -q "No Errors" "$dir/run.out"; then
        sed 's/^/  | /' "$dir/run.out"
        [ $rc -eq 124 ] && fail "$fault ($mode): the job hung" || fail "$fault ($mode): status $rc"
        return
    fi
    grep -q "bbfs fault: $point pass .*: short write" "$dir/run.out" \
        || { fail "$fault ($mode): the point was never reached with a write of 2 bytes or more"; return; }
    if [ "$mode" = deferred ]; then
        # The pending logs as a crash would leave them: each sealed at its
        # close, its datalog holding every byte its records name.
        local m
        for m in "$BBFS_LOGDIR"/*.metalog; do
            "$inspect" -s -d "$m" >"$dir/inspect.out" 2>&1 \
                && grep -q "^seal .*complete up to .*closed" "$dir/inspect.out" \
                || { sed 's/^/  | /' "$dir/inspect.out"; fail "$fault: $m is not whole"; return; }
        done
        BBFS_FAULT="$fault" timeout 120 "$MPIEXEC" -n $np "$tool" --quiet "$f" \
            </dev/null >"$dir/replay.out" 2>&1 \
            || { sed 's/^/  | /' "$dir/replay.out"; fail "$fault: bbfs-replay failed"; return; }
    fi
    cp_judge "$fault ($mode)" "$dir" --exact || return
    local left; left=$(find "$BBFS_LOGDIR" -type f | wc -l)
    [ "$left" -eq 0 ] || { fail "$fault ($mode): $left log files left"; return; }
    echo "ok: $fault ($mode): equal to ufs:"
    rows=$((rows + 1))
}

rows=0
inspect="$BUILDDIR/tools/bbfs-inspect"
for point in datalog-write metalog-write seal-write manifest-write manifest-rewrite; do
    for action in short short1 short-1; do
        for mode in close deferred; do
            row "$point" "$action" "$mode"
        done
    done
done
echo "$rows rows of 30 passed"
[ $status -eq 0 ] && rm -rf "$work"
exit $status
