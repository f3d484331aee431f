#!/usr/bin/env bash
# soak.sh — 8 processes, random operations, as many epochs as fit in
# SOAK_SECONDS (default 45), on bbfs: against t_random's model of the file.
#
# t_random checks every read against its model as it goes; afterwards the
# file must equal a ufs: run of the same number of epochs, and the largest
# anonymous resident memory of a process (its heap and private mappings; not
# MPI's shared-memory segment, see t_random.c) at the end may exceed the one
# after epoch 10 by at most a quarter (memory stays flat however long a job
# writes), and its most open file descriptors by at most 2 (none leak per
# epoch).
#
# Environment: MPIEXEC, BUILDDIR (set by make check); SOAK_SECONDS;
# SOAK_JUDGE_MEMORY=0 (make check-sanitize-mpi: AddressSanitizer holds freed
# memory in quarantine, so resident memory grows by design there);
# SOAK_NAME, SOAK_LOGDIR: the work directory's name and the log directory
# (tests/cluster/soak-nodes.sh: node-local storage on emulated nodes).
set -u
prog="$BUILDDIR/mpiio-tests/t_random"
work="$BUILDDIR/mpiio-tests/work/${SOAK_NAME:-soak}"
secs=${SOAK_SECONDS:-45}
[ -x "$prog" ] || { echo "FAIL: $prog is missing (make check builds it)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="${SOAK_LOGDIR:-$work/logs}"

T_RANDOM_EPOCHS=1000000 T_RANDOM_SECONDS=$secs timeout $((secs * 4 + 120)) \
    "$MPIEXEC" -n 8 "$prog" "bbfs:$work/bbfs.dat" </dev/null >"$work/bbfs.out" 2>&1 \
    || { sed 's/^/  | /' "$work/bbfs.out"; echo "FAIL: the bbfs: soak run failed"; exit 1; }
line=$(grep '^soak:' "$work/bbfs.out")
echo "$line"
set -- $(echo "$line" | sed 's/[^0-9. ]//g')
epochs=$1 warm=$4 end=$5 fds_warm=$7 fds_end=$8
[ "${epochs:-0}" -ge 11 ] || { echo "FAIL: only ${epochs:-0} epochs ran; the soak needs more than 10"; exit 1; }
T_RANDOM_EPOCHS=$epochs timeout $((secs * 4 + 120)) \
    "$MPIEXEC" -n 8 "$prog" "ufs:$work/ufs.dat" </dev/null >"$work/ufs.out" 2>&1 \
    || { sed 's/^/  | /' "$work/ufs.out"; echo "FAIL: the ufs: reference run failed"; exit 1; }
cmp "$work/ufs.dat" "$work/bbfs.dat" || { echo "FAIL: after $epochs epochs the file differs from ufs:"; exit 1; }
echo "ok: $epochs epochs, the file equals ufs:'s"
if [ "${SOAK_JUDGE_MEMORY:-1}" = 0 ]; then
    echo "memory not judged (SOAK_JUDGE_MEMORY=0): $warm KiB after epoch 10, $end KiB after $epochs epochs"
elif [ "$end" -gt $((warm + warm / 4)) ]; then
    echo "FAIL: resident memory grew from $warm KiB after epoch 10 to $end KiB after $epochs epochs"
    exit 1
fi
echo "ok: resident memory $warm KiB after epoch 10, $end KiB after $epochs epochs"
if [ "${fds_end:-0}" -gt $((${fds_warm:-0} + 2)) ]; then
    echo "FAIL: open file descriptors grew from $fds_warm after epoch 10 to $fds_end after $epochs epochs"
    exit 1
fi
echo "ok: open file descriptors $fds_warm after epoch 10, $fds_end after $epochs epochs"
rm -rf "$work"
