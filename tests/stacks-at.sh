#!/usr/bin/env bash
# stacks-at.sh SECONDS PROGRAM [LOGDIR] — after SECONDS, print the stacks
# of every running PROGRAM process and of the bbserver of LOGDIR.
#
# The test runners start it beside a run that a time-out bounds, a little
# shorter, and kill it when the run ends: a hang that comes once in
# hundreds of runs then shows where each process waited, in the one log
# that has it.  Stacks come from gdb (tools/install-deps.sh installs it);
# without gdb, each thread's kernel wait channel.
set -u
secs=${1:?usage: stacks-at.sh SECONDS PROGRAM [LOGDIR]}
prog=${2:?usage: stacks-at.sh SECONDS PROGRAM [LOGDIR]}
logdir=${3:-}

sleeper=""
trap '[ -n "$sleeper" ] && kill "$sleeper" 2>/dev/null; exit 0' TERM INT
sleep "$secs" & sleeper=$!
wait "$sleeper"
sleeper=""

one() {   # one PID: its command line, then its threads' stacks
    local p=$1
    echo "== pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
    if command -v gdb >/dev/null; then
        timeout 30 gdb -p "$p" -batch -nx -ex "thread apply all bt 25" 2>/dev/null \
            | grep -E '^(Thread|#)'
    else
        for t in /proc/"$p"/task/*; do
            echo "thread ${t##*/}: waits in $(cat "$t/wchan" 2>/dev/null) (no gdb for user stacks)"
        done
    fi
}
comm=$(basename "$prog" | cut -c1-15)
for p in $(pgrep -f -- "$prog"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$comm" ] && one "$p"
done
if [ -n "$logdir" ]; then
    for p in $(pgrep -f -- "bbserver --logdir $logdir "); do one "$p"; done
fi
exit 0
