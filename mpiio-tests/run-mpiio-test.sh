#!/usr/bin/env bash
# run-mpiio-test.sh SPEC.mpi — run one MPI-level test and compare files.
#
# SPEC names a test program (same basename) and lists, one "key: values" line
# each:
#   program: t_epochs        the program, if not the spec's own name
#   nprocs: 1 3 4            process counts (default 4)
#   variants: bbfs: bbfs:ufs: name prefixes to try (default bbfs:)
#   bbfs_hints: k v; k v     hints for the bbfs runs, through ROMIO_HINTS
#   replay: 1 2 6            after each bbfs run, bbfs-replay with that many
#                            processes builds the canonical file
#   env: K=V ...              environment for the bbfs runs and replays
#   expect: killed           the bbfs run dies (the program kills itself);
#                            bbfs-replay must then recover what was synced
#   bbfs_expect: N REGEX     the bbfs run's output has exactly N lines that
#                            match REGEX (grep -E); one such line per check
# For every process count the program runs once on ufs: as the reference and
# once per variant (and replay count); each run must exit 0 (the program
# checks its own reads), and the file it leaves must equal the reference
# byte for byte.
#
# Environment: MPIEXEC, BUILDDIR (set by make check); BBFS_TEST_KEEP=1 keeps
# the work directory of passing tests; BBFS_TEST_WORK_SUFFIX names another
# work directory (runs across emulated nodes); BBFS_TEST_LOGDIR, a log
# directory other than the work directory's (node-local storage);
# BBFS_TEST_TIMEOUT, seconds a run may take (300): one still running at 9/10
# of it has its processes' stacks taken (tests/stacks-at.sh), printed with
# the failure.
set -u
spec=$1
name=$(basename "$spec" .mpi)
program=$(sed -n 's/^program:[[:space:]]*//p' "$spec")
prog="$BUILDDIR/mpiio-tests/${program:-$name}"
work="$BUILDDIR/mpiio-tests/work/$name${BBFS_TEST_WORK_SUFFIX:-}"
nprocs=$(sed -n 's/^nprocs:[[:space:]]*//p' "$spec"); nprocs=${nprocs:-4}
variants=$(sed -n 's/^variants:[[:space:]]*//p' "$spec"); variants=${variants:-bbfs:}
bbfs_hints=$(sed -n 's/^bbfs_hints:[[:space:]]*//p' "$spec")
replays=$(sed -n 's/^replay:[[:space:]]*//p' "$spec")
expect=$(sed -n 's/^expect:[[:space:]]*//p' "$spec")
bbfs_env=$(sed -n 's/^env:[[:space:]]*//p' "$spec")
replay_tool="$BUILDDIR/tools/bbfs-replay"
stacks_at="$(dirname "$0")/../tests/stacks-at.sh"
timeout_s=${BBFS_TEST_TIMEOUT:-300}

[ -x "$prog" ] || { echo "FAIL: test program $prog is missing (build it with make check)"; exit 1; }
[ -x "$MPIEXEC" ] || { echo "FAIL: mpiexec $MPIEXEC is missing (MPICH not built?)"; exit 1; }

rm -rf "$work"; mkdir -p "$work"
export BBFS_LOGDIR="${BBFS_TEST_LOGDIR:-$work/logs}"; mkdir -p "$BBFS_LOGDIR"
# (a server the driver starts for a test's log directory, for a background
# close, need not outlive the test by the default 10 minutes)
export BBFS_SERVER_IDLE="${BBFS_SERVER_IDLE:-20}"
hints_file=""
if [ -n "$bbfs_hints" ]; then
    hints_file="$work/bbfs.hints"
    echo "$bbfs_hints" | tr ';' '\n' | sed 's/^[[:space:]]*//' > "$hints_file"
fi
status=0

run() {   # run NP PREFIX DIR [killed]
    local np=$1 prefix=$2 dir=$3 mode=${4:-}
    local hints=""
    mkdir -p "$dir"
    case $prefix in bbfs:*) hints=$hints_file ;; esac
    echo "+ ${hints:+ROMIO_HINTS=$hints }$MPIEXEC -n $np $prog ${prefix}$dir/data"
    local envs=""
    case $prefix in bbfs:*) envs=$bbfs_env ;; esac
    # (a hang that comes once in hundreds of runs is seen once: its stacks,
    # taken at 9/10 of the time-out, say where it waited)
    "$stacks_at" \
        $((timeout_s * 9 / 10)) "$prog" "$BBFS_LOGDIR" >"$dir/stacks" 2>&1 &
    local dog=$!
    env ROMIO_HINTS="$hints" $envs timeout "$timeout_s" "$MPIEXEC" -n "$np" "$prog" "${prefix}$dir/data" </dev/null >"$dir/out" 2>&1
    local rc=$?
    kill "$dog" 2>/dev/null; wait "$dog" 2>/dev/null
    if [ "$mode" = killed ]; then
        [ $rc -ne 0 ] && return 0
        sed 's/^/  | /' "$dir/out"; echo "FAIL: $name on ${prefix} was expected to die but exited 0"
        return 1
    fi
    if [ $rc -ne 0 ]; then
        sed 's/^/  | /' "$dir/out"
        if [ $rc -eq 124 ]; then
            sed 's/^/  stacks| /' "$dir/stacks"
            echo "FAIL: $name with $np processes on ${prefix} still running after ${timeout_s} s (BBFS_TEST_TIMEOUT), killed"
        else
            echo "FAIL: $name with $np processes on ${prefix} exited with status $rc"
        fi
        return 1
    fi
    grep -q "No Errors" "$dir/out" || { sed 's/^/  | /' "$dir/out"; echo "FAIL: $name printed no 'No Errors'"; return 1; }
    case $prefix in bbfs:*) expect_lines "$dir/out" ;; esac
}

# Each bbfs_expect line of the spec: "N REGEX", N lines of out match.
expect_lines() {
    local out=$1 n re got
    while read -r n re; do
        [ -n "$n" ] || continue
        got=$(grep -c -E -- "$re" "$out")
        if [ "$got" != "$n" ]; then
            sed 's/^/  | /' "$out"
            echo "FAIL: $name: $got lines of its output match '$re', expected $n"
            return 1
        fi
    done < <(sed -n 's/^bbfs_expect:[[:space:]]*//p' "$spec")
}

replay() {   # replay M DIR
    echo "+ $MPIEXEC -n $1 $replay_tool --quiet $2/data"
    if ! env $bbfs_env timeout "$timeout_s" "$MPIEXEC" -n "$1" "$replay_tool" --quiet "$2/data" </dev/null >"$2/replay.out" 2>&1; then
        sed 's/^/  | /' "$2/replay.out"; echo "FAIL: bbfs-replay with $1 processes failed"
        return 1
    fi
    if ls -d "$2"/.*.bbfs "$2"/.*.bbfs-manifest >/dev/null 2>&1; then
        echo "FAIL: bbfs-replay left the manifest behind"; return 1
    fi
}

for np in $nprocs; do
    ref="$work/np$np-ufs"
    run "$np" ufs: "$ref" || { status=1; continue; }
    for v in $variants; do
        for m in ${replays:-$([ "$expect" = killed ] && echo "$np" || echo -)}; do
            dir="$work/np$np-$(echo "$v" | tr -c 'a-z0-9\n' '_')"
            what="$v"
            [ "$m" = - ] || { dir="$dir-replay$m"; what="$v, replayed by $m"; }
            run "$np" "$v" "$dir" "$expect" || { status=1; continue; }
            if [ "$m" != - ]; then replay "$m" "$dir" || { status=1; continue; }; fi
            if [ -e "$ref/data" ] || [ -e "$dir/data" ]; then
                if ! cmp "$ref/data" "$dir/data"; then
                    echo "FAIL: $name, $np processes: ${what}: file differs from the ufs: reference"
                    status=1; continue
                fi
            fi
            echo "ok: $name, $np processes, $what matches ufs: ($(stat -c %s "$dir/data" 2>/dev/null || echo 0) bytes)"
        done
    done
done
[ $status -eq 0 ] && [ "${BBFS_TEST_KEEP:-0}" != 1 ] && rm -rf "$work"
exit $status
