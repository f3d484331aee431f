#!/usr/bin/env bash
# two-jobs.sh — two MPI jobs write one bbfs: file at the same time
# (t_twojobs): the second reads what the first synced, its close leaves its
# logs pending while the first is open, and the first one's close replays
# both in the order the writes were made.  The file must equal the same two
# jobs on ufs:, and no logs may be left.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
work="$BUILDDIR/mpiio-tests/work/two-jobs"
prog="$BUILDDIR/mpiio-tests/t_twojobs"
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="$work/logs"
for f in "$prog" "$MPIEXEC"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (build with make check)"; exit 1; }
done
fails=0
pair() {   # pair PREFIX: both jobs on PREFIX$work/PREFIX-data
    local p=$1 d="$work/${1%:}" f="$1$work/${1%:}-data"
    mkdir -p "$d"
    timeout 120 "$MPIEXEC" -n 2 "$prog" first "$f" "$d" </dev/null >"$d/first.out" 2>&1 &
    local a=$!
    timeout 120 "$MPIEXEC" -n 3 "$prog" second "$f" "$d" </dev/null >"$d/second.out" 2>&1
    local rb=$?
    wait $a; local ra=$?
    for j in first second; do grep -q "No Errors" "$d/$j.out" || { sed 's/^/  | /' "$d/$j.out"; }; done
    [ $ra -eq 0 ] && [ $rb -eq 0 ] || { echo "FAIL: the two jobs on $p (exit $ra, $rb)"; fails=$((fails+1)); return; }
    echo "ok: two jobs on $p"
}
pair ufs:
pair bbfs:
if cmp "$work/ufs-data" "$work/bbfs-data"; then echo "ok: the file equals the ufs: run"
else echo "FAIL: the two jobs' file on bbfs: differs from ufs:"; fails=$((fails+1)); fi
if ls "$work"/.bbfs-data.bbfs/*.manifest >/dev/null 2>&1; then
    echo "FAIL: logs left pending after both jobs closed"; fails=$((fails+1))
else echo "ok: no logs left"; fi
[ $fails -eq 0 ] && echo "PASS: two jobs" || echo "FAIL: $fails checks"
exit $((fails != 0))
