# MPICH 4.0.2 with the bbfs ROMIO driver (adio/ad_bbfs), built and cached by
# tools/build-mpich.sh and published as $(top_builddir)/mpich.  MPI programs
# of this project compile with the ordinary compiler against that prefix.

MPICH_PREFIX = $(abs_top_builddir)/mpich
MPIEXEC = $(MPICH_PREFIX)/bin/mpiexec
MPI_CPPFLAGS = -I$(MPICH_PREFIX)/include
MPI_LIBS = -L$(MPICH_PREFIX)/lib -lmpi
# MPI programs find libmpi where it was built; harmless for the others.
AM_LDFLAGS = -Wl,-rpath,$(MPICH_PREFIX)/lib

# Driver and logfs sources, and bbserver's client side, are compiled inside
# MPICH's ROMIO: any change there re-runs the (incremental, seconds-long)
# MPICH build.  (The bbserver files are those ad_bbfs/Makefile.mk names and
# ad_bbfs_bbs_client.c includes.)
BBFS_MPICH_INPUTS = \
	$(wildcard $(top_srcdir)/adio/ad_bbfs/*.[ch] $(top_srcdir)/adio/ad_bbfs/Makefile.mk) \
	$(wildcard $(top_srcdir)/logfs/*.[ch] $(top_srcdir)/logfs/sources.mk) \
	$(addprefix $(top_srcdir)/bbserver/,proto.c proto.h token.c token.h ucx_dl.c ucx_dl.h \
	  ucx.c ucx.h client.c client.h server.h) \
	$(wildcard $(top_srcdir)/adio/mpich-patches/*.patch) \
	$(top_srcdir)/tools/build-mpich.sh

# The cached MPICH is shared by every checkout that builds with the same
# inputs, and follows the last one that built there (its driver sources and
# the bbserver link): when that was another checkout, build here again, even
# if nothing changed in this one.
BBFS_MPICH_OWNER = $(shell readlink $(MPICH_PREFIX)/bin/bbserver 2>/dev/null)
BBFS_MPICH_RECLAIM = $(if $(filter $(abs_top_builddir)/bbserver/bbserver,$(BBFS_MPICH_OWNER)),,mpich-reclaim)
.PHONY: mpich-reclaim

mpich.stamp: $(BBFS_MPICH_INPUTS) $(BBFS_MPICH_RECLAIM)
	$(AM_V_GEN)$(top_srcdir)/tools/build-mpich.sh $(abs_top_builddir) "$(MPICH_SOURCE)"
	@touch $@

BUILT_SOURCES += mpich.stamp
CLEANFILES += mpich.stamp
EXTRA_DIST += $(BBFS_MPICH_INPUTS)

# `make mpich` rebuilds MPICH's part explicitly (e.g. after editing MPICH sources).
mpich: 
	rm -f mpich.stamp && $(MAKE) $(AM_MAKEFLAGS) mpich.stamp
.PHONY: mpich

# --- the driver inside MPICH under AddressSanitizer and UBSan -------------
# A second MPICH, instrumented with the driver inside (its own cache key;
# tools/build-mpich.sh, BBFS_MPICH_SANITIZE=1), then the whole test suite
# with its mpiexec: every MPI process loads the instrumented libmpi (the
# test programs themselves are not rebuilt: they are plain callers).  Any
# report stops the process with an error, so the test fails.  CI runs it.
SANITIZE_PREFIX = $(abs_top_builddir)/mpich-sanitize
.PHONY: check-sanitize-mpi mpich-sanitize
mpich-sanitize:
	BBFS_MPICH_SANITIZE=1 $(top_srcdir)/tools/build-mpich.sh $(abs_top_builddir) "$(MPICH_SOURCE)"
tests/sanitize-mpiexec: Makefile
	@mkdir -p tests
	@{ echo '#!/bin/sh'; \
	   echo '# mpiexec of the sanitizer MPICH (made by make check-sanitize-mpi)'; \
	   echo 'LD_PRELOAD="$(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)"; export LD_PRELOAD'; \
	   echo 'LD_LIBRARY_PATH="$(SANITIZE_PREFIX)/lib$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH'; \
	   echo 'ASAN_OPTIONS="detect_leaks=0:halt_on_error=1$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}"; export ASAN_OPTIONS'; \
	   echo 'UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"; export UBSAN_OPTIONS'; \
	   echo 'exec "$(SANITIZE_PREFIX)/bin/mpiexec" "$$@"'; } > $@
	@chmod +x $@
CLEANFILES += tests/sanitize-mpiexec
# The soak runs shorter, and its memory is not judged (ASan's quarantine).
# t_replay_4g and t_huge_4g are left out: they run their 2g twins' code on twice the bytes,
# which under ASan costs minutes and finds nothing the 2 GiB run would not.
SANITIZE_MPI_TESTS = $(filter-out mpiio-tests/t_replay_4g.mpi mpiio-tests/t_huge_4g.mpi,$(TESTS))
check-sanitize-mpi: mpich-sanitize tests/sanitize-mpiexec
	SOAK_SECONDS=20 SOAK_JUDGE_MEMORY=0 $(MAKE) $(AM_MAKEFLAGS) check \
	  MPIEXEC=$(abs_top_builddir)/tests/sanitize-mpiexec TESTS="$(SANITIZE_MPI_TESTS)"

# --- a few MPI tests under valgrind's memcheck ----------------------------
# Every process (the ufs: references too) runs under valgrind with the
# ordinary MPICH; any memcheck error makes it exit 9 and the test fail.
# Leaks are not counted (MPICH frees little at exit).  CI runs it.
# (All six took 10 minutes here; these two, the replay and the handles, 3.)
VALGRIND_MPI_TESTS = mpiio-tests/t_epochs.mpi mpiio-tests/t_handle_order.mpi
.PHONY: check-valgrind
tests/valgrind-mpiexec: Makefile
	@mkdir -p tests
	@{ echo '#!/bin/sh'; \
	   echo '# mpiexec -n N PROG ARGS... with every process under valgrind (make check-valgrind)'; \
	   echo 'n=$$1; np=$$2; shift 2'; \
	   echo 'exec "$(MPIEXEC)" "$$n" "$$np" valgrind -q --error-exitcode=9 --track-origins=yes "$$@"'; } > $@
	@chmod +x $@
CLEANFILES += tests/valgrind-mpiexec
check-valgrind: tests/valgrind-mpiexec
	@command -v valgrind >/dev/null || { echo "check-valgrind needs valgrind (Debian: valgrind)"; exit 1; }
	$(MAKE) $(AM_MAKEFLAGS) check MPIEXEC=$(abs_top_builddir)/tests/valgrind-mpiexec \
	  TESTS="$(VALGRIND_MPI_TESTS)"
