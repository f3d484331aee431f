#!/usr/bin/env bash
# bench-tools.sh — the benchmark tools run and write what docs/performance.md
# is made of: noncontig and workloads (tiny sizes, 4 processes) append
# well-formed CSV rows (every column, numbers where numbers belong, the rows
# each mode should give), and plot.py turns them into PNG files.  No timing
# is asserted: this machine's timings are noise at these sizes.
#
# Environment: MPI_PREFIX, BUILDDIR (set by make check).
set -u
src=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$src/../.." && pwd)
work="$BUILDDIR/tests/bench/work"
fails=0
check() {   # check DESCRIPTION COMMAND...: the command must succeed
    local what=$1; shift
    if "$@" >"$work/last.out" 2>&1; then echo "ok: $what"
    else sed 's/^/  | /' "$work/last.out"; echo "FAIL: $what"; fails=$((fails+1)); fi
}
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null \
    || { echo "FAIL: matplotlib is missing for /usr/bin/python3: install python3-matplotlib (tools/install-deps.sh does)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/logs" "$work/files"
export BBFS_LOGDIR="$work/logs"
mpiexec="$MPI_PREFIX/bin/mpiexec"

check "noncontig: two element sizes, two rounds, CSV, the time breakdown" \
    bash -c '"$@" >"$0" 2>&1' "$work/noncontig.out" \
    "$mpiexec" -n 4 "$BUILDDIR/noncontig/noncontig" -dir "$work/files" -elmtsize 8,4k -mib 1 \
    -repeat 2 -warm 4 -csv "$work/bench.csv" -label tools-check -breakdown yes
# bbfs_timing: a line per end-to-end run of the first round (independent and
# collective, two sizes), naming the calls logged: 1 MiB of 8-byte elements
# is one strided write call per process, 4 in all
check "bbfs_timing printed a breakdown for each end-to-end run, with the calls logged" \
    bash -c 'test "$(grep -c "^bbfs timing .*noncontig.bbfs_.*(4 write calls).*replay" "$0")" -eq 4' \
    "$work/noncontig.out"
# and the replay's counts, which the scaling model predicts: each process's
# domain is a quarter of the file, one round; on one node every process
# can open every log, so each reads its domain's 256 KiB from the logs
# itself: nothing is asked of or sent to other processes, and the 4 domains
# read 1 MiB in all
check "bbfs_timing counted one epoch, one round, nothing sent, 1 MiB read directly" \
    bash -c 'test "$(grep -c "^bbfs counts .*noncontig.bbfs_.*: 1 epochs in 1 exchange rounds, .* 0 datalog ranges asked of other processes and 0 bytes sent to them, 1048576 bytes read from the logs directly" "$0")" -eq 4' \
    "$work/noncontig.out"
# bbfs_force_remote sends the replay through the exchange even where every
# process could read every log: each domain gets its 3/4 from the other
# three processes' hosts (768 KiB sent in all), nothing read directly
check "noncontig under bbfs_force_remote: the replay goes through the exchange between processes" \
    bash -c '"$@" >"$0" 2>&1 && test "$(grep -c "^bbfs counts .*noncontig.bbfs_.*: 1 epochs in 1 exchange rounds, .* 12 datalog ranges asked of other processes and 786432 bytes sent to them, 0 bytes read from the logs directly" "$0")" -eq 2' \
    "$work/noncontig-remote.out" \
    "$mpiexec" -n 4 "$BUILDDIR/noncontig/noncontig" -dir "$work/files" -elmtsize 8 -mib 1 \
    -repeat 1 -warm 4 -breakdown yes -hints bbfs_force_remote=true
# One process writes a contiguous 4 MiB: one block larger than a round (1
# MiB), replayed in 4 rounds, each asking for its own MiB of the block (it
# read the whole block in every round, 16 MiB, before)
check "noncontig, 1 process: a block larger than a round is read once, a round's part each" \
    bash -c '"$@" >"$0" 2>&1 && test "$(grep -c "^bbfs counts .*noncontig.bbfs_.*: 1 epochs in 4 exchange rounds, .* 4194304 bytes read from the logs directly" "$0")" -eq 2' \
    "$work/noncontig-1p.out" \
    "$mpiexec" -n 1 "$BUILDDIR/noncontig/noncontig" -dir "$work/files" -elmtsize 8 -mib 4 \
    -repeat 1 -warm 4 -breakdown yes
# A program that writes and reads back others' data at every step (sync,
# barrier, sync between): each view of synced writes extends the last by
# the step's pieces, 4 x 256 a step, so 16 steps put 16 x 1024 pieces in,
# once each (rebuilding every view from scratch put in 1024 x (1 + ... + 16)
# = 139264, a cost that grew with the square of the steps); and each step's
# read of the next process's 256 elements, logged by one strided write, is
# one datalog read, not 256
# call-cost: a line for each of its 11 cases, and collectives counted
# inside the library (none if its PMPI_ wrappers were not the ones called:
# linked without -rdynamic, they count nothing)
check "call-cost: every case timed, the open's collectives counted in both modes" \
    bash -c '"$@" >"$0" 2>&1 && test "$(grep -c "ufs: .* bbfs: .*x   collectives [0-9]* vs [0-9]*$" "$0")" -eq 11 \
             && grep -q "^open .*collectives [1-9][0-9]* vs [1-9][0-9]*$" "$0" \
             && grep -q "^self .*collectives 0 vs 0$" "$0"' \
    "$work/call-cost.out" \
    "$mpiexec" -n 4 "$BUILDDIR/noncontig/call-cost" -dir "$work/files" -repeats 1 -iters 2
# The collectives bbfs makes inside may only go down (issue 32: at most
# stock's plus 2 per open is the goal).  Counted 2026-11-27, session 35: a
# read-only open and close 13 against stock's 11 (2 more; 16 before the
# open's hint check, findings and errors became one reduction and the
# lower file's nested open stopped asking about the system hints), an
# open, write and close that replays 24 against 15 (9 more; 38 before:
# the replay's dense domains now written independently, the close's
# epochs, errors and pending sessions one collective, the replay's and
# the lower close's outcomes one agreement, the planning agreed in the
# first epoch's reduction, no gather of log names on one node), a logged
# 8-byte write_at_all none (4096 calls and the open and close: 24; 4135
# when each call made an allreduce).  Session 38: the open, write and close
# 17 (stock's plus 2, issue 32's goal; a close where no byte is two
# processes' replays each process's own log alone, with no exchange of
# metalogs and no reduction per epoch, and, its logs in memory, needs no
# clean-up's barrier and reduction), coll8 24.  Session 39: a collective
# read of canonical data no more than stock's (4 against 5: bbfs's
# agreement gathers the offsets ROMIO's read gathered again,
# romio-stacked-offsets.patch).  Session 50: call-cost counts an open
# after the timed ones, not the first: a first open of ufs: gathers the
# host names and broadcasts the system hints (3 collectives it does not
# make again on the same communicator), so the open's 17 against "15" was
# 17 against 12 in the steady state (5 more; the issue's goal is 2).  The
# lower file's open then stopped agreeing its errors (bbfs's next
# agreement does, or ADIO_Open's): the open 16 against 12, read-only 12
# against 11, coll8 23.  Session 52: the shared pointer's file named from
# the session's id at the open (romio-driver-shfp-name.patch: no broadcast
# of the name, 2 fewer): the open 14 against 12 (issue 32's goal), read-only
# 10 against 11, coll8 21.  Session 53: a logging open's outcome, agreed
# by the logs' start, is not agreed again by ADIO_Open (ADIOI_Open_agreed,
# romio-nested-open.patch): the open 13 against 12, coll8 20.  Lower these
# limits as the counts come down.
check "call-cost: bbfs makes no more collectives than counted in session 53" \
    awk '$1 == "rdonly" && $NF > 0 && $(NF-2) <= $NF - 1 { r++ }
         $1 == "open" && $NF > 0 && $(NF-2) <= $NF + 1 { o++ }
         $1 == "coll8" && $(NF-2) <= 20 { c++ }
         $1 == "readall8" && $NF > 0 && $(NF-2) <= $NF { a++ }
         END { exit !(r == 1 && o == 1 && c == 1 && a == 1) }' "$work/call-cost.out"
# pfs-ops: the metadata operations an open-to-close round costs the
# parallel file system (system calls naming the file's directory or what
# is in it), 4 processes on one node: like the collectives, counts that no
# VM's noise moves, and that a metadata server pays for every process.
# Counted 2026-12-03, session 61: a shared open, 4 KiB write and close 14
# against ufs:'s 5 (ROMIO's detection of the lower file system, 3, which
# stock pays too for a name without a prefix; each process's look whether
# its name is a link, 4; the look for sessions at the open and the close);
# MPI_COMM_SELF 24 against 8; read-only 11 against 4.  They may only go
# down: lower these limits as the counts come down.
check "pfs-ops: an open-to-close round makes no more metadata operations than counted in session 61" \
    bash -c '"$@" >"$0" 2>&1 && awk '\''
        $1 == "shared" && $3 >= 4 && $5 <= 14 { s++ }
        $1 == "self" && $3 >= 4 && $5 <= 24 { f++ }
        $1 == "rdonly" && $3 >= 4 && $5 <= 11 { r++ }
        END { exit !(s == 1 && f == 1 && r == 1) }'\'' "$0"' \
    "$work/pfs-ops.out" "$top/tools/pfs-ops.sh" -mpiexec "$mpiexec" "$work/pfs"
# ior-pattern: IOR's patterns, every case's write and read phase timed
# (each read checks its bytes: a wrong one aborts the run)
check "ior-pattern: a write and a read line for each of its 4 cases" \
    bash -c '"$@" >"$0" 2>&1 && test "$(grep -Ec "^(fpp-4k|fpp-8|ind-8|coll-8) +(write|read) .*ufs: .* bbfs: .*x$" "$0")" -eq 8' \
    "$work/ior-pattern.out" \
    "$mpiexec" -n 4 "$BUILDDIR/noncontig/ior-pattern" -dir "$work/files" -repeats 1 -segments 1
echo "bbfs_timing true" >"$work/timing-hints"
check "model-cost: 16 steps under mpiio read back right, each view built by extending the last, each step's read one datalog read" \
    bash -c 'ROMIO_HINTS=$1 "${@:2}" >"$0" 2>&1 && grep -q "^bbfs view .*: 16 views of synced writes built (0 again from scratch), 16384 pieces put in them, 16 datalog reads for 4096 pieces read" "$0" && ! grep -q "WRONG" "$0"' \
    "$work/model-cost.out" "$work/timing-hints" \
    "$mpiexec" -n 4 "$BUILDDIR/noncontig/model-cost" -dir "$work/files" -steps 16 -veclen 256 \
    -repeats 1 -modes mpiio
# The same under collective and posix consistency, with no sync: the
# writes stay in one unsealed epoch, and each view extends the last by the
# ops logged since (it planned and indexed the whole epoch again: 139264
# pieces, 3.5x slower than stock ROMIO at 8-byte elements)
for model in collective posix; do
    check "model-cost: 16 steps under $model read back right, each view built by extending the last" \
        bash -c 'ROMIO_HINTS=$1 "${@:2}" >"$0" 2>&1 && grep -q "^bbfs view .*: 16 views of synced writes built (0 again from scratch), 16384 pieces put in them, 16 datalog reads for 4096 pieces read" "$0" && ! grep -q "WRONG" "$0"' \
        "$work/model-cost-$model.out" "$work/timing-hints" \
        "$mpiexec" -n 4 "$BUILDDIR/noncontig/model-cost" -dir "$work/files" -steps 16 -veclen 256 \
        -repeats 1 -modes $model
done
check "model-cost refuses a mode it does not know with its usage" \
    bash -c '! "$@" >"$0" 2>&1 && grep -q "^usage: model-cost" "$0"' "$work/model-cost-bad.out" \
    "$mpiexec" -n 2 "$BUILDDIR/noncontig/model-cost" -modes mpiio,bogus
check "noncontig printed a summary line for each size" \
    bash -c 'grep -A3 "^summary" "$0" | grep -Eq "^ +4096 +1.0 " && grep -A3 "^summary" "$0" | grep -Eq "^ +8 +1.0 "' \
    "$work/noncontig.out"
check "workloads: every workload at one size, every mode, CSV (same file)" \
    "$mpiexec" -n 4 "$BUILDDIR/noncontig/workloads" -dir "$work/files" -size 8k -accesses 3 \
    -dlsize 4k -samples 4 -repeat 2 -warm 4 -csv "$work/bench.csv" -label tools-check
check "the CSV: a header per tool, every row complete, the rows expected" \
    /usr/bin/python3 - "$work/bench.csv" <<'PY'
import csv, sys
lines = open(sys.argv[1], newline="").read().splitlines()
headers = [i for i, l in enumerate(lines) if l.startswith("bench,")]
assert len(headers) == 2, f"expected a header per tool, found {len(headers)}"
counts, keys = {}, []
for start, end in zip(headers, headers[1:] + [len(lines)]):
    rows = list(csv.DictReader(lines[start:end]))
    for r in rows:
        assert None not in r and None not in r.values(), f"row with a wrong column count: {r}"
        for k in ("nodes", "nprocs", "runs", "median_s", "min_s", "max_s", "mib_s"):
            float(r[k])
        assert 0 < float(r["min_s"]) <= float(r["median_s"]) <= float(r["max_s"]), r
        assert r["runs"] == "2", r
        counts[r["bench"]] = counts.get(r["bench"], 0) + 1
        if r["bench"] == "noncontig":
            keys.append((r["elmtsize"], r["target"], r["mode"]))
# noncontig: raw, 2 x ufs:, 6 bbfs rows, per size; workloads: 7 modes x
# (cn-w, sn-w: write; cc-r, cs-r, dl: write and read)
assert counts == {"noncontig": 2 * 9, "workloads": 7 * 8}, counts
# every noncontig row names its own series (two "replay of it" rows hid one
# another in the plots)
assert len(set(keys)) == len(keys), sorted(k for k in keys if keys.count(k) > 1)
print("rows:", counts)
PY
check "plot.py names the two replay rows of a CSV written before they had names of their own" \
    /usr/bin/python3 - "$top/noncontig/plot.py" <<'PY'
import importlib.util, io, os, sys, tempfile
spec = importlib.util.spec_from_file_location("plot", sys.argv[1])
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)
head = "bench,label,nodes,nprocs,elmtsize,target,mode\n"
body = "".join(f'noncontig,x,1,4,8,bbfs:,"{m}"\n' for m in (
    "independent, deferred", "replay of it", "independent",
    "collective, deferred", "replay of it", "collective"))
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
    f.write(head + body)
modes = [r["mode"] for r in plot.read_rows([f.name])]
os.unlink(f.name)
assert modes[1] == "independent, its replay" and modes[4] == "collective, its replay", modes
PY
check "plot.py: PNG plots of both tools" \
    /usr/bin/python3 "$top/noncontig/plot.py" "$work/bench.csv" -o "$work/plots"
n=0
for p in "$work"/plots/*.png; do
    [ -f "$p" ] || continue
    if [ "$(head -c 8 "$p" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] \
       && [ "$(stat -c %s "$p")" -gt 10000 ]; then n=$((n+1))
    else echo "FAIL: $p is not a PNG of a plot"; fails=$((fails+1)); fi
done
# noncontig: bandwidth and ratio; workloads: write and read
[ "$n" -eq 4 ] && echo "ok: 4 PNG plots" || { echo "FAIL: $n PNG plots, expected 4"; fails=$((fails+1)); }
check "noncontig refuses a bad element size with its usage" \
    bash -c '! "$0" -n 2 "$1" -elmtsize 8x >"$2" 2>&1 && grep -q "usage: noncontig" "$2"' \
    "$mpiexec" "$BUILDDIR/noncontig/noncontig" "$work/usage.out"
check "workloads refuses a mode it does not know with its usage" \
    bash -c '! "$0" -n 2 "$1" -modes mpiio,mpio >"$2" 2>&1 && grep -q "usage: workloads" "$2"' \
    "$mpiexec" "$BUILDDIR/noncontig/workloads" "$work/usage.out"
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
