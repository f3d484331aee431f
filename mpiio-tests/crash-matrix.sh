#!/usr/bin/env bash
# crash-matrix.sh — kill a writer at each fault point, recover, judge.
#
# For every row below, 4 processes run t_crashpoints on bbfs: (four epochs,
# three syncs and a close) with BBFS_FAULT arming one fault point in one
# process, which SIGKILLs itself there (logfs/fault.h).  The row passes when
#   - the point was reached (its line is in the output) and the job died,
#   - a recovery (a read-only reopen, or bbfs-replay) succeeds,
#   - t_crashpoints --verify finds every block that a completed sync or
#     close covered, and only data that was written, in the file
#     (--exact: the whole final file, equal to a ufs: run's, where every log
#     was sealed before the kill),
#   - no manifest is left, and no log unless the row says so.
# Replay rows kill at every round in turn, until a run finishes without
# reaching the point.  The table printed at the end is the one in
# docs/reliability.md.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
. "$(dirname "$0")/crashpoints-lib.sh"
cp_setup crash-matrix

# case DIR POINT RANK MODE RECOVERY VERIFY [LOGS_LEFT]
#   MODE close: the writer's close replays; deferred-close: it leaves the
#   logs pending; deferred: it leaves them, and bbfs-replay (armed with the
#   fault instead of the writer) is what dies.
#   Returns 0 if the row passed, 2 if the point was never reached.
case_run() {
    local dir=$1 point=$2 rank=$3 mode=$4 recovery=$5 verify=$6 logs_left=${7:-no}
    local f="$dir/data.dat" out="$dir/crash.out"
    rm -rf "$dir" "$BBFS_LOGDIR"; mkdir -p "$dir" "$BBFS_LOGDIR"
    if [ "$mode" != deferred ]; then
        local hints=$work/close.hints; [ "$mode" = deferred-close ] && hints=$work/deferred.hints
        BBFS_FAULT="$point:kill" BBFS_FAULT_RANK=$rank ROMIO_HINTS="$hints" \
            timeout 120 "$MPIEXEC" -n $np "$prog" "bbfs:$f" </dev/null >"$out" 2>&1
    else
        ROMIO_HINTS="$work/deferred.hints" timeout 120 "$MPIEXEC" -n $np "$prog" "bbfs:$f" \
            </dev/null >"$dir/write.out" 2>&1 || { cat "$dir/write.out"; fail "$point: the deferred writer failed"; return 1; }
        BBFS_FAULT="$point:kill" BBFS_FAULT_RANK=$rank ROMIO_HINTS="$work/close.hints" \
            timeout 120 "$MPIEXEC" -n $np "$tool" --quiet "$f" </dev/null >"$out" 2>&1
    fi
    local rc=$?
    if ! grep -q "bbfs fault: ${point%%#*} pass" "$out"; then
        [ $rc -eq 0 ] && return 2
        sed 's/^/  | /' "$out"; fail "$point: the job failed (status $rc) before the point"; return 1
    fi
    [ $rc -ne 0 ] || { fail "$point: the point was reached but the job exited 0"; return 1; }
    if [ "$recovery" = reopen ]; then
        ROMIO_HINTS="$work/close.hints" timeout 120 "$MPIEXEC" -n $np "$prog" --reopen "bbfs:$f" \
            </dev/null >"$dir/recover.out" 2>&1
    else
        timeout 120 "$MPIEXEC" -n $np "$tool" --quiet "$f" </dev/null >"$dir/recover.out" 2>&1
    fi || { sed 's/^/  | /' "$dir/recover.out"; fail "$point: recovery by $recovery failed"; return 1; }
    cp_judge "$point, recovered by $recovery" "$dir" "$verify" || return 1
    if ls -d "$dir"/.*.bbfs >/dev/null 2>&1; then
        fail "$point: a manifest is left after recovery by $recovery"; return 1
    fi
    local left; left=$(find "$BBFS_LOGDIR" -type f | wc -l)
    if [ "$logs_left" = no ] && [ "$left" -ne 0 ]; then
        fail "$point: $left log files left after recovery by $recovery"; return 1
    fi
    return 0
}

# row WHEN POINT RANK MODE VERIFY [LOGS_LEFT] [each-pass]
row() {
    local when=$1 point=$2 rank=$3 mode=$4 verify=$5 logs_left=${6:-no} each=${7:-}
    local passes="" k=1 res
    while :; do
        local p=$point; [ -n "$each" ] && p="$point#$k"
        local outcome=""
        for recovery in reopen bbfs-replay; do
            case_run "$work/$(echo "$p-$recovery" | tr -c 'a-z0-9-\n' _)" "$p" "$rank" "$mode" \
                "$recovery" "$verify" "$logs_left"
            res=$?
            [ $res -eq 2 ] && break
            [ $res -eq 0 ] && outcome="$outcome $recovery ok" || outcome="$outcome $recovery FAILED"
        done
        if [ $res -eq 2 ]; then
            [ -z "$each" ] && fail "$point: never reached"
            [ -n "$each" ] && [ $k -eq 1 ] && fail "$point: never reached"
            break
        fi
        echo "$p (process $rank, $mode):$outcome; epochs covered by process: ${covered:-?}"
        passes="$passes $k"
        case $outcome in *FAILED*) break ;; esac
        [ -z "$each" ] && break
        k=$((k + 1))
        [ $k -le 64 ] || { fail "$point: still reached at pass 64"; break; }
    done
    local what="covered epochs survive"
    [ "$verify" = --exact ] && what="the whole file (equal to ufs:)"
    [ "$logs_left" = no ] || what="$what; orphaned logs stay"
    table="$table| $when | \`$point\`${each:+ (passes$passes)} | $rank | $what |"$'\n'
}

row "during a write (a call half logged)"       write-extent#4000 1 close judged
row "flushing the datalog"                       datalog-write#3    1 close judged
row "data appended, its records not"            metalog-write#2    1 close judged
row "in sync: records written, seal not"        seal-write#2       1 close judged
row "in sync: sealed here, maybe not elsewhere" sync-sealed#2      1 close judged
row "in close: logs sealed, not replayed"       close-logs-closed  1 close judged
row "in close: replay, at each round"           replay-round       1 close --exact no each
row "in close: replay, between epochs"          replay-epoch-done  1 close --exact
row "in close: replayed, manifests not marked" replayed           1 close --exact
row "in close: manifests marked replayed"       marked             0 close --exact
row "in close: logs removed, manifests not"     logs-removed       1 close --exact
row "in close (deferred): manifest rewrite"     manifest-rewrite#1 0 deferred-close judged
row "in close (deferred): new text, tail not cut" manifest-truncate#1 0 deferred-close judged
row "in bbfs-replay, at each round"             replay-round       1 deferred --exact no each

echo
echo "| killed | fault point | process | recovered by a reopen and by bbfs-replay |"
echo "|---|---|---|---|"
printf '%s' "$table"
[ $status -eq 0 ] && rm -rf "$work"
exit $status
