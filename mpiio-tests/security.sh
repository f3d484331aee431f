#!/usr/bin/env bash
# security.sh — bbfs acts only on manifests and logs it can trust.
#
# A manifest is a text anyone who can write the file's directory can leave
# there, and a replay reads the logs it names and then removes them.  So:
#   1. a pending manifest that belongs to another user is refused at open
#      (MPI_ERR_ACCESS, saying why) and left alone; once it is the user's
#      own again, bbfs-replay recovers the whole file;
#   2. a planted manifest naming a file that is not a metalog (or a path with
#      .. parts) is refused as damaged, and that file is not touched;
#   3. bbfs_logdir with .. parts is refused (t_info checks the message).
# Unit tests (tests/unit/security_test.cc) cover symbolic links at log names
# and in place of the manifest directory, and log files of another user.
#
# Needs root (to make a file of another user); CI runs as root.
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
prog="$BUILDDIR/mpiio-tests/t_crashpoints"
tool="$BUILDDIR/tools/bbfs-replay"
work="$BUILDDIR/mpiio-tests/work/security"
[ -x "$prog" ] || { echo "FAIL: $prog is missing (make check builds it)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "FAIL: security.sh needs root to make a file of another user (CI runs as root)"; exit 1; }
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="$work/logs"
status=0
check() { local what=$1; shift; if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; status=1; fi; }

"$MPIEXEC" -n 4 "$prog" "ufs:$work/ref.dat" </dev/null >"$work/ref.out" 2>&1 \
    || { cat "$work/ref.out"; echo "FAIL: the ufs: reference run failed"; exit 1; }

# 1. another user's manifest
printf 'bbfs_replay never\n' > "$work/never.hints"
ROMIO_HINTS="$work/never.hints" "$MPIEXEC" -n 4 "$prog" "bbfs:$work/a.dat" </dev/null >"$work/a.out" 2>&1 \
    || { cat "$work/a.out"; echo "FAIL: writing pending logs"; exit 1; }
manifest=$(ls "$work"/.a.dat.bbfs/*.manifest)
chown 65534:65534 "$manifest"
# (Process 0 reads the manifests and says why it refuses; one is enough.)
"$MPIEXEC" -n 1 "$prog" --reopen "bbfs:$work/a.dat" </dev/null >"$work/a-reopen.out" 2>&1
check "an open refuses a pending manifest of another user" test $? -ne 0
check "... with MPI_ERR_ACCESS" grep -q "Access denied to file" "$work/a-reopen.out"
check "... saying why" grep -q "belongs to another user" "$work/a-reopen.out"
check "... and leaves it where it is" test -e "$manifest"
chown 0:0 "$manifest"
"$MPIEXEC" -n 4 "$tool" --quiet "$work/a.dat" </dev/null >"$work/a-replay.out" 2>&1
check "once it is the user's own, bbfs-replay replays it" test $? -eq 0
check "... and the file equals ufs:'s" cmp "$work/ref.dat" "$work/a.dat"

# 2. a planted manifest naming a file that is not a metalog
printf 'keep me\n' > "$work/precious"
mkdir -m 700 "$work/.b.dat.bbfs"
for victim in "$work/precious" "$work/logs/../precious.metalog"; do
    printf 'bbfs-manifest 3\nfile_id 0000000000000001\nwriters 1\nwriter 0 %s 1 %s\n' \
        "$(hostname)" "$victim" > "$work/.b.dat.bbfs/0000000000000001.manifest"
    "$MPIEXEC" -n 1 "$prog" --reopen "bbfs:$work/b.dat" </dev/null >"$work/b-reopen.out" 2>&1
    check "an open refuses a manifest naming $victim" test $? -ne 0
    check "... as damaged, saying what a manifest may name" grep -q "without . or .." "$work/b-reopen.out"
    check "... and does not touch the file" grep -q "keep me" "$work/precious"
done

[ $status -eq 0 ] && rm -rf "$work"
exit $status
