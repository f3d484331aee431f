#!/usr/bin/env bash
# server-drain.sh — a node's bbserver drains files into their canonical
# form while no MPI process takes part (docs/drain.md), and every file it
# drains equals its ufs: reference byte for byte:
#   1. files left pending with bbfs_replay=never, queued with bbsctl drain
#      and waited for with bbsctl wait (the logs, canary and manifest go);
#   2. bbfs_replay=background: the close hands the file to the node's
#      server, and an open right after the close (the drain slowed down to
#      be still running) reads every byte right (t_background);
#   3. a drain that cannot be done: bbsctl wait fails naming the file and
#      why, and the logs stay;
#   4. a server killed with SIGKILL in the middle of a drain: the next one,
#      started with the same journal, finishes it;
#   5. no server to be had: the close drains the file itself, and says so;
#   6. a server the driver starts for a background close drains the file,
#      and bbsctl wait with no -S finds it (BBFS_LOGDIR, as the driver);
#   7. with the node's server gone, bbsctl wait says canonical for a
#      drained file and, for a pending one, exits 1 naming bbfs-replay.
#
# Environment: MPIEXEC, BUILDDIR (set by make check).
set -u
work="$BUILDDIR/mpiio-tests/work/server-drain"
srv="$BUILDDIR/bbserver/bbserver"
ctl="$BUILDDIR/bbserver/bbsctl"
rm -rf "$work"; mkdir -p "$work/logs"
export BBFS_LOGDIR="$work/logs" BBFS_SERVER_TOKEN_FILE="$work/token" BBFS_SERVER_BIN="$srv"
host=$(hostname)
node_addr="$work/logs/.bbserver.$host.addr"
fails=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails+1)); }
for f in "$srv" "$ctl" "$MPIEXEC" "$BUILDDIR/mpiio-tests/t_epochs" "$BUILDDIR/mpiio-tests/t_vector" \
         "$BUILDDIR/mpiio-tests/t_background"; do
    [ -x "$f" ] || { echo "FAIL: $f is missing (build with make check)"; exit 1; }
done

spid=""
# start_server [OPTIONS...]: this node's server (the address file the
# driver looks for), its address in $addr
start_server() {
    rm -f "$node_addr"
    "$srv" --logdir "$work/logs" --address-file "$node_addr" "$@" >> "$work/server.log" 2>&1 &
    spid=$!
    for _ in $(seq 200); do [ -s "$node_addr" ] && break; sleep 0.05; done
    addr=$(cat "$node_addr" 2>/dev/null)
    [ -n "$addr" ] || { cat "$work/server.log"; echo "FAIL: the server did not start"; exit 1; }
}
stop_server() { [ -n "$spid" ] && { kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; }; spid=""; }
trap 'stop_server; pkill -f "$srv --logdir $work/logs" 2>/dev/null' EXIT
ctl() { "$ctl" -S "$addr" "$@"; }

# run PROG NAME [HINTS_FILE] [ARGS...]: 4 processes
run() {
    local prog=$1 name=$2 hints=${3:-}; shift 3 2>/dev/null || shift $#
    ROMIO_HINTS="$hints" timeout 300 "$MPIEXEC" -n 4 "$BUILDDIR/mpiio-tests/$prog" "$name" "$@" \
        </dev/null >"$work/run.out" 2>&1 || { cat "$work/run.out"; return 1; }
}
# reference PROG: the ufs: file of PROG, once
reference() {
    [ -f "$work/$1.ref" ] || run "$1" "ufs:$work/$1.ref" || fail "$1 on ufs:"
}
# canonical FILE PROG WHAT: FILE equals PROG's reference; its sessions and logs are gone
canonical() {
    local f=$1 prog=$2 what=$3 base; base=$(basename "$1")
    cmp -s "$work/$prog.ref" "$f" && ok "$what: the file equals ufs:'s" \
        || fail "$what: the file differs from ufs:'s"
    [ ! -e "$(dirname "$f")/.$base.bbfs" ] && ok "$what: no manifest is left" \
        || fail "$what: a manifest is left: $(ls "$(dirname "$f")/.$base.bbfs")"
    local left; left=$(find "$work/logs" -name "$base.*" | wc -l)
    [ "$left" = 0 ] && ok "$what: no log or canary is left" || fail "$what: $left log files left"
}

start_server
printf 'bbfs_replay never\n' > "$work/never.hints"

# 1. pending files queued by hand.  t_epochs: several epochs (syncs) of
# every process; t_vector: small pieces of 4 processes through a vector view.
for prog in t_epochs t_vector; do
    f="$work/$prog.dat"
    reference "$prog"
    run "$prog" "bbfs:$f" "$work/never.hints" || { fail "$prog on bbfs:"; continue; }
    [ -n "$(ls "$work/.$prog.dat.bbfs/" 2>/dev/null)" ] && ok "$prog: logs pending after bbfs_replay=never" \
        || fail "$prog: no pending manifest"
    out=$(ctl drain "$f" 2>&1) && ok "$prog: bbsctl drain: $out" || fail "$prog: drain: $out"
    out=$(ctl wait "$f" 2>&1) && [ "$out" = "canonical $f" ] && ok "$prog: bbsctl wait: $out" \
        || fail "$prog: wait: $out"
    canonical "$f" "$prog" "$prog (bbsctl drain)"
    out=$(ctl status "$f" 2>&1)
    echo "$out" | grep -q "^done .* 1 tries .*$f" && ok "$prog: status: $(echo "$out" | tail -1)" \
        || fail "$prog: status: $out"
done
out=$(ctl drain "$work/no-such.dat" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "no-such.dat" && ok "a file that is not there is refused: $out" \
    || fail "a missing file: status $rc, $out"

# 2. background, read back at once while the drain runs (0.25 MB/s: the
# 512 KiB of t_background's pieces take over two seconds).
stop_server; start_server --drain-rate 0.25
f="$work/bg.dat"
reference t_background
run t_background "bbfs:$f" "" background draining \
    && ok "background: the file read right while the server drained it" \
    || fail "background: t_background on bbfs:"
st=$(ctl status "$f" 2>&1)
case "$st" in *queued*|*held*|*running*) ok "background: still draining after the job: $(echo "$st" | tail -1)" ;;
              *) fail "background: the drain was not running after the job: $st" ;; esac
out=$(ctl wait "$f" 2>&1) && ok "background: bbsctl wait: $out" || fail "background: wait: $out"
canonical "$f" t_background "background"
# ... and an on_close handle of the file closed while its drain runs: the
# file is canonical, its bytes over the drained ones, when the close returns
f="$work/bg-rewrite.dat"
[ -f "$work/t_background.rewrite.ref" ] \
    || run t_background "ufs:$work/t_background.rewrite.ref" "" background rewrite \
    || fail "t_background rewrite on ufs:"
run t_background "bbfs:$f" "" background draining rewrite \
    && ok "background: an on_close close during the drain left the file canonical at once" \
    || fail "background: t_background rewrite on bbfs:"
cmp -s "$work/t_background.rewrite.ref" "$f" && ok "background + on_close: the file equals ufs:'s" \
    || fail "background + on_close: the file differs from ufs:'s"
stop_server; start_server

# 3. a log that lost synced epochs: wait fails, naming the file and why;
# the logs stay.
f="$work/lost.dat"
run t_epochs "bbfs:$f" "$work/never.hints" || fail "t_epochs on bbfs: (lost)"
m=$(ls "$work/.lost.dat.bbfs/"*.manifest)
ml=$(sed -n 's/^writer 1 [^ ]* [0-9]* //p' "$m")
truncate -s $(( $(stat -c %s "$ml") * 6 / 10 )) "$ml"; rm -f "${ml%.metalog}.sealed"
ctl drain "$f" >/dev/null 2>&1
out=$(ctl wait "$f" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "lost.dat" && echo "$out" | grep -q "synced data is missing" \
    && echo "$out" | grep -q "bbfs-replay" && ok "a drain that fails: wait says so: $out" \
    || fail "a drain that fails: wait status $rc, $out"
[ -f "$m" ] && [ -f "${ml%.metalog}.datalog" ] && ok "the failed drain keeps the manifest and the logs" \
    || fail "the failed drain removed something"
rm -rf "$work/.lost.dat.bbfs" "$work"/logs/lost.dat.*

# 4. killed in the middle: a server with a journal, slowed down, killed
# with SIGKILL; the next with the same journal finishes the file.
stop_server
f="$work/restart.dat"
reference t_vector
run t_vector "bbfs:$f" "$work/never.hints" || fail "t_vector on bbfs: (restart)"
start_server --drain-journal "$work/journal" --drain-rate 0.2
ctl drain "$f" >/dev/null 2>&1
sleep 0.5
case "$(ctl status "$f" 2>&1)" in *running*) ok "restart: the drain runs when the server is killed" ;;
                                  *) fail "restart: the drain was not running: $(ctl status "$f" 2>&1)" ;; esac
kill -9 "$spid"; wait "$spid" 2>/dev/null; spid=""
[ -n "$(ls "$work/.restart.dat.bbfs/" 2>/dev/null)" ] && ok "restart: the killed drain left the session pending" \
    || fail "restart: no session pending after the kill"
grep -qx "$f" "$work/journal" && ok "restart: the journal names the file" || fail "restart: journal: $(cat "$work/journal")"
start_server --drain-journal "$work/journal"
out=$(ctl wait "$f" 2>&1) && ok "restart: the next server finished it: $out" || fail "restart: wait: $out"
canonical "$f" t_vector "restart"
[ ! -s "$work/journal" ] && ok "restart: the journal is empty" || fail "restart: journal: $(cat "$work/journal")"
stop_server

# 5. no server to be had (the program is missing): the close drains the
# file itself before it returns, and says why.
f="$work/noserver.dat"
BBFS_SERVER_BIN=/nonexistent/bbserver run t_background "bbfs:$f" \
    && ok "no server: t_background passed" || fail "no server: t_background"
grep -q "the close drains it instead" "$work/run.out" && ok "no server: the close says it drains" \
    || fail "no server: nothing said: $(cat "$work/run.out")"
canonical "$f" t_background "no server"

# 6. no server running: the driver starts one for the node, which drains.
f="$work/started.dat"
rm -f "$node_addr"
run t_background "bbfs:$f" && ok "started: t_background passed" || fail "started: t_background"
addr=$(cat "$node_addr" 2>/dev/null)
if [ -n "$addr" ]; then
    # (no -S: bbsctl finds the node's server as the driver does, by BBFS_LOGDIR)
    out=$("$ctl" wait "$f" 2>&1) && ok "started: the started server drained it (bbsctl wait with no -S): $out" \
        || fail "started: wait: $out"
    canonical "$f" t_background "started"
    spid=$(sed -n 's/.*(pid \([0-9]*\),.*/\1/p' "$work/logs/.bbserver.$host.log" | tail -1)
    [ -n "$spid" ] && kill "$spid" 2>/dev/null; spid=""
else
    fail "started: no server was started for the background close"
fi

# 7. bbsctl wait where the node's server is gone (a job's end took it):
# a canonical file is canonical; a pending one is said, with what to run.
pkill -f "$srv --logdir $work/logs" 2>/dev/null; sleep 0.2
out=$("$ctl" wait "$work/started.dat" 2>&1) && ok "gone: wait on a drained file: $out" \
    || fail "gone: wait on a drained file: $out"
f="$work/gone.dat"
printf 'bbfs_replay never\n' > "$work/never.hints"
run t_epochs "bbfs:$f" "$work/never.hints" || fail "gone: t_epochs with never"
out=$("$ctl" wait "$f" 2>&1); rc=$?
[ $rc = 1 ] && case "$out" in *"bbfs-replay $f"*) true ;; *) false ;; esac \
    && ok "gone: wait on a pending file exits 1 and says to run bbfs-replay" \
    || fail "gone: wait on a pending file: exit $rc: $out"
rm -f "$node_addr"
out=$("$ctl" wait "$f" 2>&1); rc=$?
[ $rc = 1 ] && ok "no address file: the same" || fail "no address file: exit $rc: $out"

trap - EXIT
pkill -f "$srv --logdir $work/logs" 2>/dev/null
[ $fails = 0 ] && { rm -rf "$work"; echo "server-drain: all passed"; exit 0; }
echo "server-drain: $fails failed (work in $work)"; exit 1
