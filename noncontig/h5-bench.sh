#!/usr/bin/env bash
# h5-bench.sh — parallel HDF5 (Debian's libhdf5-mpich, unmodified) on stock
# ROMIO and on bbfs with replay at close and deferred (docs/benchmarks.md):
#   strided    a 1-D dataset, every PROCS-th double per process, independent
#              transfers (h5-strided.c: one 8-byte write call per element)
#   hyperslab  a 3-D array, one EDGE^3 block per process, collective
#              transfers (h5-hyperslab.c)
# Builds the programs with h5pcc.mpich, then runs the modes alternately,
# REPEATS times each, after writing and deleting 512 MiB (this VM hands
# freed memory back to its host), and prints every run and each median.
# Every run reads the data back and checks it; a wrong byte fails the script.
#
#   noncontig/h5-bench.sh [-n PROCS] [-e ELEMENTS_PER_PROCESS] [-c EDGE]
#                         [-k strided,hyperslab] [-r REPEATS] [-d DIR]
#
# Needs: h5pcc.mpich (libhdf5-mpich-dev), the build's mpich (make mpich).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
np=4 elements=1048576 edge=100 kinds=strided,hyperslab repeats=3 dir=${TMPDIR:-/tmp}/h5-bench
while getopts n:e:c:k:r:d:h o; do
    case $o in
        n) np=$OPTARG ;; e) elements=$OPTARG ;; c) edge=$OPTARG ;; k) kinds=$OPTARG ;;
        r) repeats=$OPTARG ;; d) dir=$OPTARG ;;
        *) sed -n '2,17p' "$0"; exit 2 ;;
    esac
done
for k in ${kinds//,/ }; do
    case $k in strided|hyperslab) ;; *) echo "h5-bench: unknown kind $k (strided, hyperslab)"; exit 2 ;; esac
done
command -v h5pcc.mpich >/dev/null || { echo "h5-bench: h5pcc.mpich is missing (libhdf5-mpich-dev)"; exit 1; }
rm -rf "$dir"; mkdir -p "$dir/logs"
for k in ${kinds//,/ }; do
    h5pcc.mpich -O2 -o "$dir/h5-$k" "$top/noncontig/h5-$k.c"
done
run() { BBFS_LOGDIR="$dir/logs" "$top/tools/bbfs-run" "$@"; }
dd if=/dev/zero of="$dir/warm" bs=1M count=512 status=none; rm -f "$dir/warm"
declare -A times
status=0
for r in $(seq "$repeats"); do
    for k in ${kinds//,/ }; do
        size=$elements
        [ "$k" = hyperslab ] && size=$edge
        for mode in ufs bbfs bbfs-never; do
            case $mode in
                ufs) out=$(run -- -n "$np" "$dir/h5-$k" "ufs:$dir/f.h5" "$size") ;;
                bbfs) out=$(run -- -n "$np" "$dir/h5-$k" "bbfs:$dir/f.h5" "$size") ;;
                bbfs-never) out=$(run --hint bbfs_replay=never -- -n "$np" "$dir/h5-$k" \
                                      "bbfs:$dir/f.h5" "$size") ;;
            esac || status=1
            echo "$k $mode: $out"
            case $out in *" ok") ;; *) status=1 ;; esac
            times[$k.$mode]+="$(echo "$out" | awk '{print $3, $5, $7}');"
            rm -rf "$dir"/f.h5 "$dir"/.f.h5.bbfs "$dir"/logs/*
        done
    done
done
for k in ${kinds//,/ }; do
    case $k in
        strided) echo "$k, medians of $repeats ($np processes, $elements doubles each, every ${np}th, independent):" ;;
        hyperslab) echo "$k, medians of $repeats ($np processes, a block of $edge^3 doubles each, collective):" ;;
    esac
    for mode in ufs bbfs bbfs-never; do
        echo "${times[$k.$mode]}" | tr ';' '\n' | grep . | sort -n -k3 | awk -v m="$mode" \
            '{w[NR]=$1; c[NR]=$2; t[NR]=$3} END {k=int((NR+1)/2);
              printf "  %-11s write %.3f s  close %.3f s  total %.3f s\n", m, w[k], c[k], t[k]}'
    done
done
exit $status
