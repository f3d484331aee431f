# The benchmark tools run and write well-formed CSV and PNG plots (no
# timing is asserted).
TESTS += %reldir%/bench-tools.sh
EXTRA_DIST += %reldir%/bench-tools.sh
