#!/usr/bin/env bash
# replay-tool.sh — bbfs-replay as a user runs it: --help, --dry-run (changes
# nothing), a refusal on a corrupt metalog that keeps the logs, --salvage
# that reports what it could not recover, and "nothing to do" afterwards.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
work="$BUILDDIR/mpiio-tests/work/replay-tool"
tool="$BUILDDIR/tools/bbfs-replay"
writer="$BUILDDIR/mpiio-tests/t_epochs"
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="$work/logs"
fails=0
check() {   # check DESCRIPTION COMMAND...: the command must succeed
    local what=$1; shift
    if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; fails=$((fails+1)); fi
}
run_tool() {   # run_tool OUTFILE ARGS...: prints the exit status
    "$MPIEXEC" -n 2 "$tool" "${@:2}" </dev/null >"$1" 2>&1
    echo $?
}
manifest_of() {   # manifest_of NAME: the manifest of pending logs of $work/NAME
    ls "$work/.$1.bbfs/"*.manifest 2>/dev/null | head -1
}

for f in "$tool" "$writer" "$MPIEXEC"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (build with make check)"; exit 1; }
done

printf 'bbfs_replay never\n' > "$work/hints"
ROMIO_HINTS="$work/hints" "$MPIEXEC" -n 4 "$writer" "bbfs:$work/data" </dev/null >"$work/writer.out" 2>&1 \
    || { cat "$work/writer.out"; echo "FAIL: writing pending logs"; exit 1; }
manifest=$(manifest_of data)
check "logs are pending after bbfs_replay=never" test -f "$manifest"

# A replay that dies between two epochs leaves everything for the next one.
ROMIO_HINTS="$work/hints" "$MPIEXEC" -n 4 "$writer" "bbfs:$work/again.dat" </dev/null >"$work/w2.out" 2>&1 \
    || { cat "$work/w2.out"; echo "FAIL: writing pending logs"; exit 1; }
"$MPIEXEC" -n 4 "$writer" "ufs:$work/ref.dat" </dev/null >"$work/ref.out" 2>&1 \
    || { cat "$work/ref.out"; echo "FAIL: writing the ufs: reference"; exit 1; }
BBFS_FAULT=replay-epoch-done:kill "$MPIEXEC" -n 3 "$tool" --quiet "$work/again.dat" \
    </dev/null >"$work/died.out" 2>&1
check "a replay killed after its first epoch fails" test $? -ne 0
check "the killed replay leaves the manifest" test -n "$(manifest_of again.dat)"
rc=$(run_tool "$work/restart" --quiet "$work/again.dat")
check "the replay run again succeeds" test "$rc" = 0
check "the restarted replay gives the reference file" cmp "$work/ref.dat" "$work/again.dat"

# A datalog cut short (lost bytes) fails the replay on every process, without
# hanging the others, and keeps the logs.
mkdir -p "$work/logs-short"
ROMIO_HINTS="$work/hints" BBFS_LOGDIR="$work/logs-short" "$MPIEXEC" -n 4 "$writer" "bbfs:$work/short.dat" </dev/null >"$work/w3.out" 2>&1 \
    || { cat "$work/w3.out"; echo "FAIL: writing pending logs"; exit 1; }
ml2=$(sed -n 's/^writer 2 [^ ]* [0-9]* //p' "$(manifest_of short.dat)")
truncate -s 100 "${ml2%.metalog}.datalog"
rc=$(timeout 120 "$MPIEXEC" -n 3 "$tool" --quiet "$work/short.dat" </dev/null >"$work/short.out" 2>&1; echo $?)
check "a short datalog fails the replay (exit 1, no hang)" test "$rc" = 1
check "the failure says the datalog is short" grep -q "shorter than its metalog" "$work/short.out"
check "the failed replay keeps the manifest" test -n "$(manifest_of short.dat)"

# A metalog cut back with its seal gone reads as a clean, shorter log; the
# manifest's count of the epochs its writer closed it with catches the loss.
mkdir -p "$work/logs-lost"
ROMIO_HINTS="$work/hints" BBFS_LOGDIR="$work/logs-lost" "$MPIEXEC" -n 4 "$writer" "bbfs:$work/lost.dat" </dev/null >"$work/w4.out" 2>&1 \
    || { cat "$work/w4.out"; echo "FAIL: writing pending logs"; exit 1; }
check "the manifest records the epochs each writer closed with" \
    grep -q "^writer 3 [^ ]* [1-9][0-9]* /" "$(manifest_of lost.dat)"
ml3=$(sed -n 's/^writer 3 [^ ]* [0-9]* //p' "$(manifest_of lost.dat)")
truncate -s $(( $(stat -c %s "$ml3") * 6 / 10 )) "$ml3"
rm -f "${ml3%.metalog}.sealed"
rc=$(run_tool "$work/lost" --dry-run "$work/lost.dat")
check "a log that lost closed epochs fails even a dry run" test "$rc" = 1
check "the failure says synced data is missing" grep -q "synced data is missing" "$work/lost"
rc=$(run_tool "$work/lost-salvage" --salvage "$work/lost.dat")
check "--salvage replays what the log still holds" test "$rc" = 0
check "--salvage says what was missing" grep -q "synced data is missing" "$work/lost-salvage"

# A writer whose logs are gone altogether (its node's storage lost): the
# replay refuses and says --salvage; --salvage replays the other writers,
# names the lost one, and leaves its bytes out.  t_contig: rank r writes
# bytes [r * B + k * 4B, + B) for k = 0, 1, 2 (B = 100000).
contig="$BUILDDIR/mpiio-tests/t_contig"
mkdir -p "$work/logs-gone"
ROMIO_HINTS="$work/hints" BBFS_LOGDIR="$work/logs-gone" "$MPIEXEC" -n 4 "$contig" "bbfs:$work/gone.dat" </dev/null >"$work/w5.out" 2>&1 \
    || { cat "$work/w5.out"; echo "FAIL: writing pending logs"; exit 1; }
"$MPIEXEC" -n 4 "$contig" "ufs:$work/gone-ref.dat" </dev/null >"$work/w6.out" 2>&1 \
    || { cat "$work/w6.out"; echo "FAIL: writing the ufs: reference"; exit 1; }
mg=$(sed -n 's/^writer 2 [^ ]* [0-9]* //p' "$(manifest_of gone.dat)")
rm -f "$mg" "${mg%.metalog}.datalog" "${mg%.metalog}.sealed"
rc=$(BBFS_LOGDIR="$work/logs-gone" run_tool "$work/gone" --quiet "$work/gone.dat")
check "a writer whose logs are gone fails the replay" test "$rc" = 1
check "the failure suggests --salvage" grep -q -- "--salvage replays the other writers" "$work/gone"
check "the refused replay keeps the manifest" test -n "$(manifest_of gone.dat)"
rc=$(BBFS_LOGDIR="$work/logs-gone" run_tool "$work/gone-salvage" --salvage --quiet "$work/gone.dat")
check "--salvage replays the other writers" test "$rc" = 0
check "--salvage names the writer it could not recover" \
    grep -q "writer 2 not recovered: no process can read its log" "$work/gone-salvage"
python3 - "$work/gone-ref.dat" "$work/gone-expect.dat" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
B = 100000
for k in range(3):
    at = 2 * B + k * 4 * B
    b[at:at + B] = bytes(B)
open(sys.argv[2], 'wb').write(b)
PY
check "the file holds every other writer's bytes, and zeros for writer 2's" \
    cmp "$work/gone-expect.dat" "$work/gone.dat"
check "the salvaged replay removes the manifest" test -z "$(manifest_of gone.dat)"

rc=$(run_tool "$work/help" --help)
check "--help exits 0" test "$rc" = 0
check "--help explains --dry-run and --salvage" grep -q -- "--salvage" "$work/help"
rc=$(run_tool "$work/badopt" --frobnicate "$work/data")
check "an unknown option is a usage error (exit 2, as bbfs-inspect's)" test "$rc" = 2
check "an unknown option shows the usage" grep -q "^usage: " "$work/badopt"
rc=$(run_tool "$work/twofiles" "$work/data" "$work/data2")
check "two files are a usage error" test "$rc" = 2
rc=$(run_tool "$work/dry-short" -n "bbfs:ufs:$work/data")
check "-n is --dry-run, and bbfs:ufs: names the same file" grep -q "^writers  4" "$work/dry-short"

rc=$(run_tool "$work/dry" --dry-run "$work/data")
check "--dry-run exits 0" test "$rc" = 0
check "--dry-run lists the 4 writers" grep -q "^writers  4" "$work/dry"
check "--dry-run lists epochs with bytes" grep -q "^epoch 0: [0-9]* bytes" "$work/dry"
check "--dry-run changes nothing" test -f "$manifest"

# Corrupt writer 1's first WRITE record payload (header record: 37 bytes).
ml=$(sed -n 's/^writer 1 [^ ]* [0-9]* //p' "$manifest")
printf '\x55' | dd of="$ml" bs=1 seek=50 conv=notrunc status=none
rc=$(run_tool "$work/refuse" "$work/data")
check "a corrupt metalog makes the replay fail" test "$rc" = 1
check "the failure names the damage" grep -q "checksum mismatch" "$work/refuse"
check "the failure suggests --salvage" grep -q -- "--salvage" "$work/refuse"
check "the refused replay keeps the logs" test -f "$manifest"
# Named through a symbolic link in another directory, the file's pending
# logs are found where they are, beside the file (logfs_canonical_name).
ROMIO_HINTS="$work/hints" "$MPIEXEC" -n 4 "$writer" "bbfs:$work/linked.dat" </dev/null >"$work/w3.out" 2>&1 \
    || { cat "$work/w3.out"; echo "FAIL: writing pending logs"; exit 1; }
mkdir -p "$work/elsewhere" && ln -s ../linked.dat "$work/elsewhere/name"
rc=$(run_tool "$work/via-link" --quiet "$work/elsewhere/name")
check "a replay through a link succeeds" test "$rc" = 0
check "a replay through a link replays the file's logs" test -z "$(manifest_of linked.dat)"
check "a replay through a link gives the reference file" cmp "$work/ref.dat" "$work/linked.dat"

rc=$(run_tool "$work/salvage" --salvage "$work/data")
check "--salvage replays" test "$rc" = 0
check "--salvage reports what it could not recover" grep -q "writer 1.*not.*recover" "$work/salvage"
check "--salvage ends with a summary line" grep -q "^bbfs-replay: .* replayed by 2 processes" "$work/salvage"
check "the manifest is gone after the replay" test ! -e "$manifest"
check "its directory is gone too" test ! -e "$work/.data.bbfs"
check "the logs are gone after the replay" test -z "$(ls "$work/logs")"

rc=$(run_tool "$work/again" "$work/data")
check "a second run has nothing to do" grep -q "no pending logs" "$work/again"

# While a handle of the file is open, pending logs are left to its close
# (t_twojobs: "first" holds the file open until told; "second" reads the
# first's synced data, writes, and closes, leaving its logs pending).
holder="$BUILDDIR/mpiio-tests/t_twojobs"
mkdir -p "$work/hold" "$work/hold2"
timeout 120 "$MPIEXEC" -n 2 "$holder" first "bbfs:$work/held" "$work/hold" </dev/null >"$work/holder.out" 2>&1 &
hpid=$!
for i in $(seq 600); do [ -e "$work/hold/A-synced" ] && break; sleep 0.1; done
touch "$work/hold2/A-synced"
timeout 120 "$MPIEXEC" -n 2 "$holder" second "bbfs:$work/held" "$work/hold2" </dev/null >"$work/second.out" 2>&1
check "a second job's close leaves its logs pending while the first is open" test $? = 0
rc=$(run_tool "$work/held.out" "$work/held")
check "bbfs-replay leaves them, exit status 3" test "$rc" = 3
check "and says the last handle to close replays them" grep -q "still open, and the last of them to close" "$work/held.out"
touch "$work/hold/B-done"
wait $hpid
check "the open handle closes cleanly" test $? = 0
check "its close replayed every session" test -z "$(ls "$work/.held.bbfs" 2>/dev/null)"

[ $fails -eq 0 ] && rm -rf "$work"
echo "replay-tool: $fails failed"
[ $fails -eq 0 ]
