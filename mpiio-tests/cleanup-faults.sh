#!/usr/bin/env bash
# cleanup-faults.sh — a replay removes the logs only once the data is safe
# in the file, and never leaves logs unnamed.
#
# 1. Logs that cannot be removed after a replay stay named.
# t_crashpoints runs with 4 processes on bbfs: and its close replays; in
# process 1 the removal of its log fails (fault point log-remove, EIO,
# once).  The data is in the file, so every call succeeds; but the logs
# left behind must stay named by their manifest (marked replayed), or they
# would fill the log directory with files nobody knows of.  Then a
# recovery (a read-only reopen, or bbfs-replay) must remove them and the
# manifest, and leave the file as it was: equal to the ufs: run's.
#
# 2. An open that replays pending logs (t_crashpoints --reopen, after a
# writer that left them with bbfs_replay never) where closing the lower
# file fails (fault point lower-close, EIO, once; a network file system
# reports a failed write-back there): the open fails with MPI_ERR_IO on
# every process, and the logs and the manifest stay; a second reopen
# replays them, and the file equals the ufs: run's.  (The logs used to be
# removed before that close, its error never read.)
#
# 3. The same at a close that replays (t_crashpoints, default hints): the
# close fails with MPI_ERR_IO on every process saying the logs stay, and
# they and the manifest do; a reopen replays them, the file equals the
# ufs: run's.  (The close used to remove the logs before it closed the
# lower file.)
#
# (The log directory holds each writer's 3 files and, the writers sharing
# it on one node, the session's canary: logfs/manifest.h, version 7.)
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
. "$(dirname "$0")/crashpoints-lib.sh"
cp_setup cleanup-faults

for recovery in reopen bbfs-replay; do
    dir="$work/$recovery"; f="$dir/data.dat"
    rm -rf "$dir" "$BBFS_LOGDIR"; mkdir -p "$dir" "$BBFS_LOGDIR"
    echo "+ BBFS_FAULT=log-remove:EIO:once BBFS_FAULT_RANK=1 mpiexec -n $np t_crashpoints bbfs:$f"
    BBFS_FAULT=log-remove:EIO:once BBFS_FAULT_RANK=1 ROMIO_HINTS="$work/close.hints" timeout 120 \
        "$MPIEXEC" -n $np "$prog" "bbfs:$f" </dev/null >"$dir/run.out" 2>&1
    if [ $? -ne 0 ] || ! grep -q "No Errors" "$dir/run.out"; then
        sed 's/^/  | /' "$dir/run.out"; fail "$recovery: the run failed"; continue
    fi
    grep -q "logs are left" "$dir/run.out" || { sed 's/^/  | /' "$dir/run.out"; fail "$recovery: nothing said that logs are left"; continue; }
    left=$(find "$BBFS_LOGDIR" -type f | wc -l)
    [ "$left" -eq 3 ] || { fail "$recovery: $left log files left, expected process 1's 3"; continue; }
    ls -d "$dir"/.*.bbfs >/dev/null 2>&1 || { fail "$recovery: the manifest naming the logs left was removed"; continue; }
    cp_judge "$recovery: before recovery" "$dir" --exact || continue
    if [ "$recovery" = reopen ]; then
        ROMIO_HINTS="$work/close.hints" timeout 120 "$MPIEXEC" -n $np "$prog" --reopen "bbfs:$f"
    else
        timeout 120 "$MPIEXEC" -n $np "$tool" --quiet "$f"
    fi </dev/null >"$dir/recover.out" 2>&1 || { sed 's/^/  | /' "$dir/recover.out"; fail "$recovery failed"; continue; }
    cp_judge "$recovery: after recovery" "$dir" --exact || continue
    left=$(find "$BBFS_LOGDIR" -type f | wc -l)
    [ "$left" -eq 0 ] || { fail "$recovery: $left log files left after recovery"; continue; }
    if ls -d "$dir"/.*.bbfs >/dev/null 2>&1; then fail "$recovery: a manifest is left after recovery"; continue; fi
    echo "ok: 3 log files left and named; $recovery removed them, the file equal to ufs:"
done
dir="$work/lower-close"; f="$dir/data.dat"
rm -rf "$dir" "$BBFS_LOGDIR"; mkdir -p "$dir" "$BBFS_LOGDIR"
echo "+ mpiexec -n $np t_crashpoints bbfs:$f (deferred); BBFS_FAULT=lower-close:EIO:once ... --reopen"
if ! ROMIO_HINTS="$work/deferred.hints" timeout 120 "$MPIEXEC" -n $np "$prog" "bbfs:$f" \
        </dev/null >"$dir/run.out" 2>&1; then
    sed 's/^/  | /' "$dir/run.out"; fail "lower-close: the deferred writer failed"
elif BBFS_FAULT=lower-close:EIO:once timeout 120 "$MPIEXEC" -n $np "$prog" --reopen "bbfs:$f" \
        </dev/null >"$dir/fault.out" 2>&1; then
    fail "lower-close: the reopen succeeded although closing the lower file failed"
elif [ "$(grep -c 'open failed: Other I/O error' "$dir/fault.out")" -ne $np ] \
        || ! grep -q 'nothing is lost: the logs stay' "$dir/fault.out"; then
    sed 's/^/  | /' "$dir/fault.out"
    fail "lower-close: the reopen failed, but not with MPI_ERR_IO on every process and a message saying the logs stay"
elif [ "$(find "$BBFS_LOGDIR" -type f | wc -l)" -ne $((3 * np + 1)) ] || ! ls -d "$dir"/.*.bbfs >/dev/null 2>&1; then
    fail "lower-close: logs or manifest removed although the lower close failed ($(find "$BBFS_LOGDIR" -type f | wc -l) files in the log directory)"
elif ! ROMIO_HINTS="$work/close.hints" timeout 120 "$MPIEXEC" -n $np "$prog" --reopen "bbfs:$f" \
        </dev/null >"$dir/recover.out" 2>&1; then
    sed 's/^/  | /' "$dir/recover.out"; fail "lower-close: the second reopen failed"
elif cp_judge "lower-close: after the second reopen" "$dir" --exact; then
    if [ "$(find "$BBFS_LOGDIR" -type f | wc -l)" -ne 0 ]; then fail "lower-close: logs left"
    else echo "ok: lower close failed: the open failed and kept the $((3 * np)) log files and the canary; a second reopen replayed them, the file equal to ufs:"; fi
fi

dir="$work/close-lower"; f="$dir/data.dat"
rm -rf "$dir" "$BBFS_LOGDIR"; mkdir -p "$dir" "$BBFS_LOGDIR"
echo "+ BBFS_FAULT=lower-close:EIO:once mpiexec -n $np t_crashpoints bbfs:$f; ... --reopen"
if ! BBFS_FAULT=lower-close:EIO:once BBFS_EXPECT_CLASS=MPI_ERR_IO BBFS_EXPECT_TEXT="the logs stay" \
        ROMIO_HINTS="$work/close.hints" timeout 120 "$MPIEXEC" -n $np "$prog" "bbfs:$f" \
        </dev/null >"$dir/fault.out" 2>&1; then
    sed 's/^/  | /' "$dir/fault.out"; fail "close-lower: the writer did not fail its close as expected"
elif [ "$(grep -c 'first error in MPI_File_close(&fh): .*the logs stay' "$dir/fault.out")" -ne $np ]; then
    sed 's/^/  | /' "$dir/fault.out"
    fail "close-lower: not every process's close failed saying the logs stay"
elif [ "$(find "$BBFS_LOGDIR" -type f | wc -l)" -ne $((3 * np + 1)) ] || ! ls -d "$dir"/.*.bbfs >/dev/null 2>&1; then
    fail "close-lower: logs or manifest removed although the lower close failed ($(find "$BBFS_LOGDIR" -type f | wc -l) files in the log directory)"
elif ! ROMIO_HINTS="$work/close.hints" timeout 120 "$MPIEXEC" -n $np "$prog" --reopen "bbfs:$f" \
        </dev/null >"$dir/recover.out" 2>&1; then
    sed 's/^/  | /' "$dir/recover.out"; fail "close-lower: the reopen failed"
elif cp_judge "close-lower: after the reopen" "$dir" --exact; then
    if [ "$(find "$BBFS_LOGDIR" -type f | wc -l)" -ne 0 ]; then fail "close-lower: logs left"
    else echo "ok: lower close failed at the close's replay: the close failed and kept the $((3 * np)) log files and the canary; a reopen replayed them, the file equal to ufs:"; fi
fi
[ $status -eq 0 ] && rm -rf "$work"
exit $status
