#!/usr/bin/env bash
# h5-bench.sh — parallel HDF5 (Debian's libhdf5-mpich, unmodified) writing a
# strided dataset with independent transfers, on stock ROMIO and on bbfs
# with replay at close and deferred (docs/benchmarks.md).  Builds
# h5-strided.c with h5pcc.mpich, then runs the modes alternately, REPEATS
# times each, after writing and deleting 512 MiB (this VM hands freed memory
# back to its host), and prints every run and each mode's median.
#
#   noncontig/h5-bench.sh [-n PROCS] [-e ELEMENTS_PER_PROCESS] [-r REPEATS] [-d DIR]
#
# Needs: h5pcc.mpich (libhdf5-mpich-dev), the build's mpich (make mpich).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
np=4 elements=1048576 repeats=3 dir=${TMPDIR:-/tmp}/h5-bench
while getopts n:e:r:d:h o; do
    case $o in
        n) np=$OPTARG ;; e) elements=$OPTARG ;; r) repeats=$OPTARG ;; d) dir=$OPTARG ;;
        *) sed -n '2,12p' "$0"; exit 2 ;;
    esac
done
command -v h5pcc.mpich >/dev/null || { echo "h5-bench: h5pcc.mpich is missing (libhdf5-mpich-dev)"; exit 1; }
rm -rf "$dir"; mkdir -p "$dir/logs"
h5pcc.mpich -O2 -o "$dir/h5-strided" "$top/noncontig/h5-strided.c"
run() { BBFS_LOGDIR="$dir/logs" "$top/tools/bbfs-run" "$@"; }
dd if=/dev/zero of="$dir/warm" bs=1M count=512 status=none; rm -f "$dir/warm"
declare -A times
for r in $(seq "$repeats"); do
    for mode in ufs bbfs bbfs-never; do
        case $mode in
            ufs) out=$(run -- -n "$np" "$dir/h5-strided" "ufs:$dir/f.h5" "$elements") ;;
            bbfs) out=$(run -- -n "$np" "$dir/h5-strided" "bbfs:$dir/f.h5" "$elements") ;;
            bbfs-never) out=$(run --hint bbfs_replay=never -- -n "$np" "$dir/h5-strided" \
                                  "bbfs:$dir/f.h5" "$elements") ;;
        esac
        echo "$mode: $out"
        times[$mode]+="$(echo "$out" | awk '{print $3, $5, $7}');"
        rm -rf "$dir"/f.h5 "$dir"/.f.h5.bbfs "$dir"/logs/*
    done
done
echo "medians of $repeats ($np processes, $elements doubles each, every ${np}th):"
for mode in ufs bbfs bbfs-never; do
    echo "${times[$mode]}" | tr ';' '\n' | grep . | sort -n -k3 | awk -v m="$mode" \
        '{w[NR]=$1; c[NR]=$2; t[NR]=$3} END {k=int((NR+1)/2);
          printf "  %-11s write %.3f s  close %.3f s  total %.3f s\n", m, w[k], c[k], t[k]}'
done
