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
# logs with the data still in the page cache.  The runner's file comparison
# with ufs: is made too.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
prog="$BUILDDIR/mpiio-tests/t_setsize"
work="$BUILDDIR/mpiio-tests/work/durable-flush"
command -v strace >/dev/null || { echo "FAIL: durable-flush.sh needs strace (Debian: strace; tools/install-deps.sh installs it)"; exit 1; }
[ -x "$prog" ] || { echo "FAIL: $prog is missing (make check builds it)"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
printf 'bbfs_durable true\n' > "$work/hints"
status=0
fail() { echo "FAIL: $*"; status=1; }

"$MPIEXEC" -n 4 "$prog" "ufs:$work/ref.dat" </dev/null >"$work/ref.out" 2>&1 \
    || { cat "$work/ref.out"; echo "FAIL: the ufs: reference run failed"; exit 1; }
for lower in ufs nfs; do
    d="$work/$lower"; mkdir -p "$d/logs"
    f="$d/data.dat"
    echo "+ ROMIO_HINTS=$work/hints strace -f -y ... mpiexec -n 4 t_setsize bbfs:$lower:$f"
    BBFS_LOGDIR="$d/logs" ROMIO_HINTS="$work/hints" timeout 300 \
        strace -f -y -o "$d/trace" -e trace=pwrite64,pwritev,write,writev,fsync,fdatasync,unlink,unlinkat \
        "$MPIEXEC" -n 4 "$prog" "bbfs:$lower:$f" </dev/null >"$d/out" 2>&1
    if [ $? -ne 0 ] || ! grep -q "No Errors" "$d/out"; then
        sed 's/^/  | /' "$d/out"; fail "$lower: the run failed"; continue
    fi
    cmp "$work/ref.dat" "$f" || { fail "$lower: the file differs from the ufs: run's"; continue; }
    # pid call(fd</path>...: the canonical file is $f; logs end in .datalog.
    verdict=$(awk -v data="<$f>" '
        index($2, data) && $2 ~ /^(pwrite64|pwritev|write|writev)\(/ { dirty[$1] = 1; writes++ }
        index($2, data) && $2 ~ /^fsync\(/ { delete dirty[$1]; fsyncs++ }
        $2 ~ /^unlink(at)?\(/ && /\.datalog"/ {
            removed++
            for (p in dirty) { print "process " p " wrote the file and had not fsynced it when " $1 " removed a log: " $0; bad = 1; exit }
        }
        END { if (!bad) printf "ok %d %d %d\n", writes, fsyncs, removed }' "$d/trace")
    case $verdict in
        ok\ *) set -- $verdict
               [ "$4" -gt 0 ] && [ "$2" -gt 0 ] || { fail "$lower: no write of the file or no log removed under strace ($verdict)"; continue; }
               echo "ok: $lower: $2 writes of the canonical file, $3 fsyncs of it, $4 datalogs removed, each after the fsyncs" ;;
        *) fail "$lower: $verdict" ;;
    esac
done
[ $status -eq 0 ] && rm -rf "$work"
exit $status
