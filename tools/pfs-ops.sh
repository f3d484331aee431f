#!/usr/bin/env bash
# pfs-ops.sh — what an open-to-close sequence costs the parallel file
# system: on bbfs: and on ufs: (stock ROMIO), the system calls per round
# that name the file's directory, or a file or directory in it (metadata
# operations: on Lustre or NFS each is a round trip to a metadata server,
# and every process's count adds up there).  Reads and writes of data,
# and closes, are not counted.  Each process runs under strace; a round's
# count is the difference between runs of A and B rounds, divided by B - A
# (the first open of a process, and the program's start, cancel out).
#
# usage: tools/pfs-ops.sh [-n P] [-cases shared,self,rdonly] [-mpiexec CMD] DIR
#   DIR      a directory on the file system to count (made and emptied)
#   -n       processes (default 4)
#   -mpiexec the launcher (default: mpiexec in PATH; an emulated
#            cluster's DIR/mpiexec runs across its nodes)
# Prints one line per case: "CASE ufs: U bbfs: B" (operations per round,
# all processes together).  Needs strace, and noncontig/open-rounds built
# (BUILDDIR, default this checkout).  BBFS_LOGDIR as for any bbfs: job.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
prog="${BUILDDIR:-$top}/noncontig/open-rounds"
np=4 cases=shared,self,rdonly mpiexec=mpiexec
while [ $# -gt 1 ]; do
    case $1 in
        -n) np=$2; shift 2 ;;
        -cases) cases=$2; shift 2 ;;
        -mpiexec) mpiexec=$2; shift 2 ;;
        *) echo "usage: pfs-ops.sh [-n P] [-cases shared,self,rdonly] [-mpiexec CMD] DIR" >&2
           exit 2 ;;
    esac
done
[ $# = 1 ] || { echo "usage: pfs-ops.sh [-n P] [-cases shared,self,rdonly] [-mpiexec CMD] DIR" >&2; exit 2; }
command -v strace >/dev/null || { echo "pfs-ops.sh: needs strace (Debian: strace)" >&2; exit 1; }
[ -x "$prog" ] || { echo "pfs-ops.sh: $prog is missing (make builds it)" >&2; exit 1; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
A=2 B=6

# count MODE CASE N: the directory's operations in a run of N rounds
count() {
    local files="$dir/files" n
    rm -rf "$files" "$traces"/t.*; mkdir -p "$files"
    if [ "$2" = rdonly ]; then
        "$mpiexec" -n "$np" "$prog" "$1:$files" "$3" make-ro </dev/null >/dev/null
    fi
    # (each process traced apart, and not what it starts: strace -f on the
    # launcher follows no process onto an emulated node, and a bbserver the
    # job starts outlives it; the driver's file system calls are the main
    # thread's)
    "$mpiexec" -n "$np" sh -c 'exec strace -y -qq -o "$0/t.$$" "$@"' "$traces" \
        "$prog" "$1:$files" "$3" "$2" </dev/null >/dev/null
    n=$(cat "$traces"/t.* | grep -F "$files" | grep -v 'resumed>' \
        | grep -Ev '^([0-9]+ +)?(read|write|pread64|pwrite64|readv|writev|preadv|pwritev|preadv2|pwritev2|close|lseek|mmap|munmap)\(' \
        | wc -l)
    echo "$n"
}

for c in ${cases//,/ }; do
    line="$c"
    for m in ufs bbfs; do
        a=$(count $m "$c" $A)
        b=$(count $m "$c" $B)
        line="$line $m: $(awk -v a="$a" -v b="$b" -v d=$((B - A)) 'BEGIN { printf "%.1f", (b - a) / d }')"
    done
    echo "$line"
done
