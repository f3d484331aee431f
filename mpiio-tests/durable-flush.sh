#!/usr/bin/env bash
# durable-flush.sh — with bbfs_durable, the canonical file is on disk before
# any log that held its data is removed.
#
# t_setsize (four handles of one file, three of whose sessions are replayed)
# runs with 4 processes and the hint bbfs_durable true under strace, over
# the ufs and the nfs lower drivers.  In the order strace saw the calls,
# no datalog may be unlinked while a process has written the canonical file
# since its last fsync of it.  ROMIO's flush only fsyncs a file its driver
# marked as written, and the nfs driver's writes never mark it: before the
# replay marked the file itself, every replay but the first removed its
# logs with the data still in the page cache.  The file must equal a ufs:
# run's.
#
# Then durability travels with the session: t_crashpoints writes with
# bbfs_durable true and bbfs_replay never, and bbfs-replay, with no hint,
# replays the pending logs under strace: the same rule holds (before the
# manifest said "durable", the replay flushed by its own hints: not at all).
# The writer's trace must show the log directory and the manifest's
# directory fsynced (the logs' and the manifest's names survive a crash).
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
prog="$BUILDDIR/mpiio-tests/t_setsize"
writer="$BUILDDIR/mpiio-tests/t_crashpoints"
tool="$BUILDDIR/tools/bbfs-replay"
work="$BUILDDIR/mpiio-tests/work/durable-flush"
command -v strace >/dev/null || { echo "FAIL: durable-flush.sh needs strace (Debian: strace; tools/install-deps.sh installs it)"; exit 1; }
for x in "$prog" "$writer" "$tool"; do
    [ -x "$x" ] || { echo "FAIL: $x is missing (make check builds it)"; exit 1; }
done
rm -rf "$work"; mkdir -p "$work"
printf 'bbfs_durable true\n' > "$work/hints"
status=0
fail() { echo "FAIL: $*"; status=1; }

# judge WHAT TRACE FILE: no datalog unlinked while a process has written FILE
# since its last fsync of it (in the order strace saw the calls).
judge() {
    local what=$1 trace=$2 f=$3 verdict
    # pid call(fd</path>...: the canonical file is $f; logs end in .datalog.
    verdict=$(awk -v data="<$f>" '
        index($2, data) && $2 ~ /^(pwrite64|pwritev|write|writev)\(/ { dirty[$1] = 1; writes++ }
        index($2, data) && $2 ~ /^fsync\(/ { delete dirty[$1]; fsyncs++ }
        $2 ~ /^unlink(at)?\(/ && /\.datalog"/ {
            removed++
            for (p in dirty) { print "process " p " wrote the file and had not fsynced it when " $1 " removed a log: " $0; bad = 1; exit }
        }
        END { if (!bad) printf "ok %d %d %d\n", writes, fsyncs, removed }' "$trace")
    case $verdict in
        ok\ *) set -- $verdict
               [ "$4" -gt 0 ] && [ "$2" -gt 0 ] || { fail "$what: no write of the file or no log removed under strace ($verdict)"; return; }
               echo "ok: $what: $2 writes of the canonical file, $3 fsyncs of it, $4 datalogs removed, each after the fsyncs" ;;
        *) fail "$what: $verdict" ;;
    esac
}
traced() {   # traced TRACE COMMAND...
    local trace=$1; shift
    timeout 300 strace -f -y -o "$trace" -e trace=pwrite64,pwritev,write,writev,fsync,fdatasync,unlink,unlinkat "$@"
}

"$MPIEXEC" -n 4 "$prog" "ufs:$work/ref.dat" </dev/null >"$work/ref.out" 2>&1 \
    || { cat "$work/ref.out"; echo "FAIL: the ufs: reference run failed"; exit 1; }
for lower in ufs nfs; do
    d="$work/$lower"; mkdir -p "$d/logs"
    f="$d/data.dat"
    echo "+ ROMIO_HINTS=$work/hints strace -f -y ... mpiexec -n 4 t_setsize bbfs:$lower:$f"
    BBFS_LOGDIR="$d/logs" ROMIO_HINTS="$work/hints" \
        traced "$d/trace" "$MPIEXEC" -n 4 "$prog" "bbfs:$lower:$f" </dev/null >"$d/out" 2>&1
    if [ $? -ne 0 ] || ! grep -q "No Errors" "$d/out"; then
        sed 's/^/  | /' "$d/out"; fail "$lower: the run failed"; continue
    fi
    cmp "$work/ref.dat" "$f" || { fail "$lower: the file differs from the ufs: run's"; continue; }
    judge "t_setsize over $lower" "$d/trace" "$f"
done

# durability travels with the session
d="$work/pending"; mkdir -p "$d/logs"; f="$d/data.dat"
printf 'bbfs_durable true\nbbfs_replay never\n' > "$work/pending.hints"
"$MPIEXEC" -n 4 "$writer" "ufs:$d/ref.dat" </dev/null >"$d/ref.out" 2>&1 \
    || { cat "$d/ref.out"; echo "FAIL: the ufs: reference run failed"; exit 1; }
echo "+ ROMIO_HINTS=$work/pending.hints mpiexec -n 4 t_crashpoints bbfs:$f; strace ... bbfs-replay $f"
if ! BBFS_LOGDIR="$d/logs" ROMIO_HINTS="$work/pending.hints" \
        traced "$d/write.trace" "$MPIEXEC" -n 4 "$writer" "bbfs:$f" </dev/null >"$d/out" 2>&1; then
    sed 's/^/  | /' "$d/out"; fail "the durable deferred writer failed"
elif ! grep -q '^durable$' "$d"/.*.bbfs/* 2>/dev/null; then
    fail "the pending manifest does not say durable"
elif ! grep -q "fsync([0-9]*<$d/logs>" "$d/write.trace"; then
    fail "durable logs, but their directory was never fsynced (their names could be lost)"
elif ! grep -q "fsync([0-9]*<$d/.data.dat.bbfs>" "$d/write.trace"; then
    fail "a durable session, but its manifest's directory was never fsynced"
elif ! BBFS_LOGDIR="$d/logs" traced "$d/trace" "$MPIEXEC" -n 4 "$tool" --quiet "$f" \
        </dev/null >"$d/replay.out" 2>&1; then
    sed 's/^/  | /' "$d/replay.out"; fail "bbfs-replay of the durable session failed"
elif ! cmp "$d/ref.dat" "$f"; then
    fail "bbfs-replay: the file differs from the ufs: run's"
else
    judge "bbfs-replay (no hint) of a durable session" "$d/trace" "$f"
fi
[ $status -eq 0 ] && rm -rf "$work"
exit $status
