#!/bin/sh
# bbfs-inspect on real metalogs: a clean one, a torn one, one cut below its
# seal and a corrupt one;
# checks the verdict line and the exit status of each.
set -u
B=./tools/bbfs-inspect
S=./tests/fuzz/make-seeds
T=$(mktemp -d "${TMPDIR:-/tmp}/inspect-test.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

$S "$T" || fail "make-seeds"
out=$($B "$T/seed1.metalog") || fail "clean log: exit $?"
echo "$out" | grep -q '^end     clean (closed)' || fail "clean log: $out"
echo "$out" | grep -q '20 x 9 B @ 0 stride 64' || fail "strided group not shown compactly: $out"
echo "$out" | grep -q '^seal    complete up to 144 bytes (3 epochs, closed, seal 3)' || fail "seal: $out"

size=$(wc -c <"$T/seed1.metalog")
head -c $((size - 3)) "$T/seed1.metalog" >"$T/torn.metalog"
out=$($B "$T/torn.metalog") || fail "torn log: exit $?"
echo "$out" | grep -q '^end     torn: 9 bytes at offset' || fail "torn log: $out"

# The same cut with the seal beside it: the sealed part is damaged.
cp "$T/seed1.sealed" "$T/torn.sealed"
out=$($B "$T/torn.metalog"); rc=$?
[ $rc -eq 1 ] || fail "log cut below its seal: exit $rc"
echo "$out" | grep -q '^end     CORRUPT .*truncated below its sealed length 144' || fail "cut below seal: $out"

cp "$T/seed1.metalog" "$T/bad.metalog"
printf 'X' | dd of="$T/bad.metalog" bs=1 seek=66 conv=notrunc 2>/dev/null
out=$($B "$T/bad.metalog"); rc=$?
[ $rc -eq 1 ] || fail "corrupt log: exit $rc"
echo "$out" | grep -q '^end     CORRUPT .*checksum mismatch at offset 54' || fail "corrupt log: $out"

$B --help | grep -q 'stride' || fail "--help does not explain groups"
$B >/dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments must exit 2"
echo "bbfs-inspect: ok"
