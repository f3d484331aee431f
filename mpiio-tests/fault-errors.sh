#!/usr/bin/env bash
# fault-errors.sh — a full or failing device under each file bbfs writes.
#
# Each row runs t_crashpoints on bbfs: with 4 processes and one fault point
# armed to fail with ENOSPC or EIO from its N-th pass on (logfs/fault.h):
# the datalog, the metalog, the seal, the manifest (at open, and rewritten
# by a deferred close) and the canonical file (written by the replay); and
# one row removes the log directory's files while the file is open, and one
# fails a datalog read of the replay's exchange between processes.  A row
# passes when
#   - the job ends, every call returns (no hang), and the faulted process's
#     first error has the expected MPI error class and a message saying
#     what happened and what to do (t_crashpoints judges this itself);
#   - bbfs-replay afterwards, with the device working again, leaves a file
#     holding everything a completed sync or close covered
#     (t_crashpoints --verify; --exact: the whole file, as ufs: has it).
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
. "$(dirname "$0")/crashpoints-lib.sh"
cp_setup fault-errors

# row FILE FAULT RANK HINTS CLASS TEXT VERIFY
#   FAULT is POINT#N:ERRNO for BBFS_FAULT, or "remove-logs"; RANK "-" arms
#   every process (then process 0 judges); VERIFY is judged, --exact, or
#   "none" (nothing can be recovered: the logs are gone).
row() {
    local file=$1 fault=$2 rank=$3 hints=$4 cls=$5 text=$6 verify=$7
    local dir; dir="$work/$(echo "$fault-$rank" | tr -c 'a-zA-Z0-9-\n' _)"
    local f="$dir/data.dat" envs=(BBFS_EXPECT_CLASS="$cls" BBFS_EXPECT_TEXT="$text")
    cp_stop_servers; rm -rf "$dir" "$BBFS_LOGDIR"; mkdir -p "$dir" "$BBFS_LOGDIR"
    if [ "$fault" = remove-logs ]; then envs+=(BBFS_TEST_REMOVE_LOGS=1)
    else envs+=(BBFS_FAULT="$fault"); fi
    [ "$rank" = - ] || envs+=(BBFS_FAULT_RANK="$rank")
    echo "+ ${envs[*]} mpiexec -n $np t_crashpoints bbfs:$f"
    env "${envs[@]}" ROMIO_HINTS="$work/$hints.hints" timeout 120 \
        "$MPIEXEC" -n $np "$prog" "bbfs:$f" </dev/null >"$dir/run.out" 2>&1
    local rc=$?
    local msg; msg=$(sed -n "s/^process ${rank/-/0}: first error in //p" "$dir/run.out" | head -1)
    if [ $rc -ne 0 ] || ! grep -q "No Errors" "$dir/run.out"; then
        sed 's/^/  | /' "$dir/run.out"
        [ $rc -eq 124 ] && fail "$file ($fault): the job hung" || fail "$file ($fault): status $rc"
        return
    fi
    local outcome="$cls"
    if [ "$verify" != none ]; then
        timeout 120 "$MPIEXEC" -n $np "$tool" --quiet "$f" </dev/null >"$dir/recover.out" 2>&1 \
            || { sed 's/^/  | /' "$dir/recover.out"; fail "$file ($fault): bbfs-replay failed"; return; }
        cp_judge "$file ($fault), recovered" "$dir" "$verify" || return
        outcome="$outcome; recovered: epochs covered by process $covered"
    fi
    echo "ok: $file, $fault, process $rank: $outcome"
    echo "    $msg"
    table="$table| $file | \`$fault\` | \`$cls\` | ${msg#*bbfs: } |"$'\n'
}

row datalog           datalog-write#2:ENOSPC  1 close    MPI_ERR_NO_SPACE "log space full" judged
row datalog           datalog-write#2:EIO     1 close    MPI_ERR_IO       "log device failed"     judged
row metalog           metalog-write#2:ENOSPC  1 close    MPI_ERR_NO_SPACE "log space full" judged
row metalog           metalog-write#2:EIO     1 close    MPI_ERR_IO       "log device failed"     judged
row seal              seal-write#2:ENOSPC     1 close    MPI_ERR_NO_SPACE "log space full" judged
row seal              seal-write#2:EIO        1 close    MPI_ERR_IO       "log device failed"     judged
row "manifest (first log files)" manifest-write#1:ENOSPC - close MPI_ERR_NO_SPACE "must be writable" none
row "manifest (close)" manifest-rewrite#1:EIO 0 deferred MPI_ERR_IO     "manifest"              judged
row "canonical file"  canonical-write:ENOSPC  - close    MPI_ERR_NO_SPACE "nothing is lost"       --exact
row "canonical file"  canonical-write:EIO     - close    MPI_ERR_IO       "nothing is lost"       --exact
row "log directory removed" remove-logs       0 close    MPI_ERR_NO_SUCH_FILE "removed"           none

# A host of the replay's exchange (the path across nodes, forced on one
# node) cannot read a datalog another process's domain needs: no process
# writes bytes it did not get, and every process's error is the host's,
# with what it says (the rounds agree nothing; the replay's end does).
printf 'bbfs_replay_buffer 65536\nbbfs_force_remote true\n' > "$work/remote.hints"
row "datalog, read by a replay's host" exchange-serve#3:EIO 1 remote MPI_ERR_IO \
    "cannot read datalog" --exact
d="$work/exchange-serve_3_EIO-1"
n=$(grep -c "first error in .*cannot read datalog" "$d/run.out" 2>/dev/null)
if [ "$n" != "$np" ]; then
    sed 's/^/  | /' "$d/run.out"
    fail "exchange-serve: $n of $np processes report the host's error (each should)"
else
    echo "ok: every process reports the host's error"
fi
# ... and before any recovery, the file holds no byte the replay did not
# get: each is the reference's, or not written (zero).
d="$work/exchange-partial"
cp_stop_servers; rm -rf "$d" "$BBFS_LOGDIR"; mkdir -p "$d" "$BBFS_LOGDIR"
BBFS_FAULT="exchange-serve#3:EIO" BBFS_FAULT_RANK=1 BBFS_EXPECT_CLASS=MPI_ERR_IO \
    ROMIO_HINTS="$work/remote.hints" timeout 120 "$MPIEXEC" -n $np "$prog" "bbfs:$d/data.dat" \
    </dev/null >"$d/run.out" 2>&1
wrong=$(cmp -l "$work/ref.dat" "$d/data.dat" 2>/dev/null | awk '$3 != 0' | wc -l)
if ! grep -q "No Errors" "$d/run.out"; then
    sed 's/^/  | /' "$d/run.out"; fail "exchange-serve (partial): the run failed"
elif [ "$wrong" != 0 ]; then
    fail "exchange-serve: the failed replay wrote $wrong bytes it did not get"
else
    echo "ok: the failed replay wrote no byte it did not get"
fi

echo
echo "| file | fault | error class | message (after the file name) |"
echo "|---|---|---|---|"
printf '%s' "$table"
[ $status -eq 0 ] && rm -rf "$work"
exit $status
