# GoogleTest unit tests of logfs, plain and under ASan/UBSan.

LOGFS_UNIT = %reldir%/logfs-unit
check_PROGRAMS += $(LOGFS_UNIT)
%canon_reldir%_logfs_unit_SOURCES = \
	%reldir%/helpers.h %reldir%/helpers.cc %reldir%/writers_fixture.h \
	%reldir%/crc32c_test.cc \
	%reldir%/errors_test.cc \
	%reldir%/extents_test.cc \
	%reldir%/summary_test.cc \
	%reldir%/rangemap_test.cc \
	%reldir%/writer_test.cc \
	%reldir%/carry_test.cc \
	%reldir%/steps_test.cc \
	%reldir%/lazy_files_test.cc \
	%reldir%/run_test.cc \
	%reldir%/reader_test.cc \
	%reldir%/datalog_reader_test.cc \
	%reldir%/readmap_test.cc \
	%reldir%/seal_test.cc \
	%reldir%/index_test.cc \
	%reldir%/planner_test.cc \
	%reldir%/drain_fixture.h %reldir%/drain_test.cc %reldir%/drains_test.cc \
	%reldir%/plan_sessions_test.cc \
	%reldir%/plan_compact_test.cc \
	%reldir%/pmem_test.cc \
	%reldir%/bad_input_test.cc \
	%reldir%/manifest_test.cc \
	%reldir%/sessions_test.cc \
	%reldir%/security_test.cc \
	%reldir%/hint_table_test.cc \
	%reldir%/export_test.cc \
	%reldir%/proto_test.cc \
	%reldir%/bigbuf_test.cc \
	%reldir%/token_test.cc \
	%reldir%/ownmap_test.cc \
	%reldir%/serve_test.cc \
	%reldir%/state_test.cc \
	%reldir%/write_faults_test.cc \
	adio/ad_bbfs/ad_bbfs_hint_table.h adio/ad_bbfs/ad_bbfs_hint_table.c \
	$(BBS_CORE_C)
# The driver's hint table is plain C and tested here too, against docs/hints.md.
%canon_reldir%_logfs_unit_CPPFLAGS = $(LOGFS_CPPFLAGS) -I$(srcdir)/adio/ad_bbfs $(BBS_CPPFLAGS) \
	-DBBFS_SRCDIR='"$(abs_srcdir)"'
%canon_reldir%_logfs_unit_CFLAGS = $(LOGFS_CFLAGS)
%canon_reldir%_logfs_unit_LDADD = $(LOGFS_LIB) @GTEST_LIBS@ @PMEM_LIBS@
# The same tests once more with libpmem told that every mapping is pmem.
TESTS += $(LOGFS_UNIT) %reldir%/pmem-forced.sh %reldir%/inspect-test.sh
EXTRA_DIST += %reldir%/pmem-forced.sh %reldir%/inspect-test.sh

.PHONY: check-logfs
# Build and run only logfs's tests (plain `make check` also builds MPICH).
check-logfs: $(LOGFS_UNIT) tools/bbfs-inspect tests/fuzz/make-seeds
	PMEM_IS_PMEM_FORCE=0 ./$(LOGFS_UNIT)
	PMEM_IS_PMEM_FORCE=1 ./$(LOGFS_UNIT)
	$(SHELL) $(srcdir)/%reldir%/inspect-test.sh

# logfs and its unit tests under AddressSanitizer and UBSan:
# A separate build of the same sources into tests/san (the normal objects
# stay uninstrumented); CI runs it.  The driver inside MPICH is not built
# this way yet (docs/reliability.md, "Not covered yet").
SAN_FLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
SAN_LOGFS_SRCS = $(LOGFS_SRCS) $(filter %.c,$(%canon_reldir%_logfs_unit_SOURCES))
SAN_UNIT_SRCS = $(filter %.cc,$(%canon_reldir%_logfs_unit_SOURCES))
.PHONY: check-sanitize
# Each file compiles on its own, on every core (xargs -P): one compiler
# call for all of them took 6 minutes on 2 cores.
SAN_CXXFLAGS = $(SAN_FLAGS) -I$(abs_srcdir)/logfs -I$(abs_srcdir)/%reldir% \
	-I$(abs_srcdir)/adio/ad_bbfs -I$(abs_srcdir)/bbserver -DBBFS_SRCDIR=\"$(abs_srcdir)\"
tests/san/logfs-unit: $(SAN_LOGFS_SRCS) $(SAN_UNIT_SRCS) $(LOGFS_HDRS)
	@mkdir -p tests/san
	rm -f tests/san/*.o
	cd tests/san && printf '%s\n' $(SAN_LOGFS_SRCS) | xargs -P "$$(nproc)" -I{} sh -c \
	  '$(CC) $(SAN_FLAGS) -std=c11 -D_POSIX_C_SOURCE=200809L -c "$(abs_srcdir)/{}" -o "$$(basename {} .c).o"'
	cd tests/san && printf '%s\n' $(SAN_UNIT_SRCS) | xargs -P "$$(nproc)" -I{} sh -c \
	  '$(CXX) $(SAN_CXXFLAGS) -c "$(abs_srcdir)/{}" -o "unit-$$(basename {} .cc).o"'
	cd tests/san && $(CXX) $(SAN_FLAGS) *.o -o logfs-unit @GTEST_LIBS@ @PMEM_LIBS@
check-sanitize: tests/san/logfs-unit
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  PMEM_IS_PMEM_FORCE=0 ./tests/san/logfs-unit
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  PMEM_IS_PMEM_FORCE=1 ./tests/san/logfs-unit
CLEANFILES += tests/san/logfs-unit
