#!/usr/bin/env bash
# server-drain.sh — a node's bbserver replays a file's pending logs into it
# with no MPI process (bbsctl drain, logfs_drain_file: the first step of the
# background drain, docs/drain.md).  Files written with bbfs_replay=never by
# 4 processes on this node (lazy sessions), drained by the server: each
# equals its ufs: reference byte for byte, and its logs, canary and
# manifest are gone.  Then what a drain refuses.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
work="$BUILDDIR/mpiio-tests/work/server-drain"
srv="$BUILDDIR/bbserver/bbserver"
ctl="$BUILDDIR/bbserver/bbsctl"
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="$work/logs" BBFS_SERVER_TOKEN_FILE="$work/token"
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
for f in "$srv" "$ctl" "$MPIEXEC" "$BUILDDIR/mpiio-tests/t_epochs" "$BUILDDIR/mpiio-tests/t_vector"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (build with make check)"; exit 1; }
done

"$srv" --logdir "$work/logs" --address-file "$work/addr" > "$work/server.log" 2>&1 &
spid=$!
trap 'kill $spid 2>/dev/null; wait $spid 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.05; done
addr=$(cat "$work/addr" 2>/dev/null)
[ -n "$addr" ] || { cat "$work/server.log"; echo "FAIL: the server did not start"; exit 1; }
ctl() { "$ctl" -S "$addr" "$@"; }

printf 'bbfs_replay never\n' > "$work/never.hints"
# t_epochs: several epochs (syncs) of every process; t_vector: 8-byte
# pieces of 4 processes interleaved through a vector view.
for prog in t_epochs t_vector; do
    f="$work/$prog.dat"
    ROMIO_HINTS="$work/never.hints" "$MPIEXEC" -n 4 "$BUILDDIR/mpiio-tests/$prog" "bbfs:$f" \
        </dev/null >"$work/$prog.out" 2>&1 || { cat "$work/$prog.out"; fail "$prog on bbfs:"; continue; }
    "$MPIEXEC" -n 4 "$BUILDDIR/mpiio-tests/$prog" "ufs:$work/$prog.ref" \
        </dev/null >"$work/$prog.ref.out" 2>&1 || { cat "$work/$prog.ref.out"; fail "$prog on ufs:"; continue; }
    [ -n "$(ls "$work/.$prog.dat.bbfs/" 2>/dev/null)" ] && ok "$prog: logs pending after bbfs_replay=never" \
        || fail "$prog: no pending manifest"
    if out=$(ctl drain "$f" 2>&1); then ok "$prog: bbsctl drain: $out"; else fail "$prog: drain: $out"; fi
    cmp -s "$work/$prog.ref" "$f" && ok "$prog: the drained file equals ufs:'s" \
        || fail "$prog: the drained file differs from ufs:'s"
    [ ! -e "$work/.$prog.dat.bbfs" ] && ok "$prog: the manifest is gone" || fail "$prog: a manifest is left"
    left=$(find "$work/logs" -name "$prog.dat.*" | wc -l)
    [ "$left" = 0 ] && ok "$prog: no log or canary is left" || fail "$prog: $left log files left"
    out=$(ctl drain "$f" 2>&1)
    case "$out" in *" 0 bytes, 0 epochs"*) ok "$prog: a second drain has nothing to do" ;;
                   *) fail "$prog: a second drain: $out" ;; esac
done

out=$(ctl drain "relative/path.dat" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "absolute path" && ok "a relative path is refused: $out" \
    || fail "a relative path: status $rc, $out"

# A log that lost synced epochs: the drain refuses and keeps everything.
f="$work/lost.dat"
ROMIO_HINTS="$work/never.hints" "$MPIEXEC" -n 4 "$BUILDDIR/mpiio-tests/t_epochs" "bbfs:$f" \
    </dev/null >"$work/lost.out" 2>&1 || { cat "$work/lost.out"; fail "t_epochs on bbfs: (lost)"; }
m=$(ls "$work/.lost.dat.bbfs/"*.manifest)
ml=$(sed -n 's/^writer 1 [^ ]* [0-9]* //p' "$m")
truncate -s $(( $(stat -c %s "$ml") * 6 / 10 )) "$ml"; rm -f "${ml%.metalog}.sealed"
out=$(ctl drain "$f" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "synced data is missing" && ok "a log short of its epochs is refused: $out" \
    || fail "a log short of its epochs: status $rc, $out"
[ -f "$m" ] && [ -f "${ml%.metalog}.datalog" ] && ok "the refused drain keeps the manifest and the logs" \
    || fail "the refused drain removed something"

kill $spid; wait $spid 2>/dev/null; trap - EXIT
[ $fails = 0 ] && { rm -rf "$work"; echo "server-drain: all passed"; exit 0; }
echo "server-drain: $fails failed (work in $work)"; exit 1
