#!/bin/sh
# slowest-tests.sh [N]: the N (default 12) slowest tests of test-times.log
# (written by tests/timed-test-driver, one "SECONDS NAME" line per test
# run), and their sum, then empties the log for the next stage.
n=${1:-12}
[ -s test-times.log ] || exit 0
total=$(awk '{s += $1} END {print s}' test-times.log)
count=$(wc -l <test-times.log)
echo "slowest of $count tests ($total s in all):"
sort -rn test-times.log | head -n "$n" | sed 's/^/  /'
: >test-times.log
