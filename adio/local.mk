# The MPI library with the bbfs ROMIO driver inside, built and cached by
# tools/build-mpich.sh (MPICH 4.0.2, the default) or tools/build-ompi.sh
# (Open MPI 5.0.7, configure --with-mpi=openmpi) and published as
# $(top_builddir)/mpich or $(top_builddir)/ompi.  MPI programs of this
# project compile with the ordinary compiler against that prefix.

if BBFS_OPEN_MPI
MPI_PREFIX = $(abs_top_builddir)/ompi
# Open MPI's mpiexec with what the tests need of it (tests/ompi-mpiexec.in)
MPIEXEC = $(abs_top_builddir)/tests/ompi-mpiexec
MPI_BUILD = $(top_srcdir)/tools/build-ompi.sh $(abs_top_builddir) "$(OMPI_SOURCE)"
MPI_BUILD_INPUTS = $(top_srcdir)/tools/build-ompi.sh $(wildcard $(top_srcdir)/adio/ompi-patches/*)
else
MPI_PREFIX = $(abs_top_builddir)/mpich
MPIEXEC = $(MPI_PREFIX)/bin/mpiexec
MPI_BUILD = $(top_srcdir)/tools/build-mpich.sh $(abs_top_builddir) "$(MPICH_SOURCE)"
MPI_BUILD_INPUTS = $(top_srcdir)/tools/build-mpich.sh $(wildcard $(top_srcdir)/adio/mpich-patches/mpich-*.patch)
endif
MPI_CPPFLAGS = -I$(MPI_PREFIX)/include
MPI_LIBS = -L$(MPI_PREFIX)/lib -lmpi
# MPI programs find libmpi where it was built; harmless for the others.
AM_LDFLAGS = -Wl,-rpath,$(MPI_PREFIX)/lib

# Driver and logfs sources, and bbserver's client side, are compiled inside
# MPICH's ROMIO: any change there re-runs the (incremental, seconds-long)
# MPICH build.  (The bbserver files are those ad_bbfs/Makefile.mk names and
# ad_bbfs_bbs_client.c includes.)
BBFS_MPI_INPUTS = \
	$(wildcard $(top_srcdir)/adio/ad_bbfs/*.[ch] $(top_srcdir)/adio/ad_bbfs/Makefile.mk) \
	$(wildcard $(top_srcdir)/logfs/*.[ch] $(top_srcdir)/logfs/sources.mk) \
	$(addprefix $(top_srcdir)/bbserver/,proto.c proto.h bigbuf.c bigbuf.h token.c token.h ucx_dl.c ucx_dl.h \
	  ucx.c ucx.h client.c client.h server.h drains.h) \
	$(wildcard $(top_srcdir)/adio/mpich-patches/romio-*.patch) \
	$(top_srcdir)/tools/build-common.sh $(MPI_BUILD_INPUTS)

# The cached MPICH is shared by every checkout that builds with the same
# inputs, and follows the last one that built there (its driver sources and
# the bbserver link): when that was another checkout, build here again, even
# if nothing changed in this one.
BBFS_MPI_OWNER = $(shell readlink $(MPI_PREFIX)/bin/bbserver 2>/dev/null)
BBFS_MPI_RECLAIM = $(if $(filter $(abs_top_builddir)/bbserver/bbserver,$(BBFS_MPI_OWNER)),,mpi-reclaim)
.PHONY: mpi-reclaim

mpi.stamp: $(BBFS_MPI_INPUTS) $(BBFS_MPI_RECLAIM)
	$(AM_V_GEN)$(MPI_BUILD)
	@touch $@

BUILT_SOURCES += mpi.stamp
CLEANFILES += mpi.stamp
EXTRA_DIST += $(BBFS_MPI_INPUTS)

# `make mpi` (or `make mpich`) rebuilds the MPI library's part explicitly
# (e.g. after editing its sources in the cache).
mpi mpich:
	rm -f mpi.stamp && $(MAKE) $(AM_MAKEFLAGS) mpi.stamp
.PHONY: mpi mpich

# --- Open MPI's mpiexec, as the tests run it --------------------------------
# ROMIO (io romio341) for every file, so that the ufs: reference runs go
# through the same MPI-IO layer as the bbfs: ones (a bbfs: name alone
# selects it: ompi-romio-selects-bbfs.patch); more processes than cores;
# root allowed (CI runs as root).
if BBFS_OPEN_MPI
tests/ompi-mpiexec: Makefile
	@mkdir -p tests
	@{ echo '#!/bin/sh'; \
	   echo '# Open MPI mpiexec for the tests (made by make, adio/local.mk)'; \
	   echo 'OMPI_ALLOW_RUN_AS_ROOT=1; OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1'; \
	   echo 'export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM'; \
	   echo 'exec "$(MPI_PREFIX)/bin/mpiexec" --oversubscribe --mca io romio341 "$$@"'; } > $@
	@chmod +x $@
BUILT_SOURCES += tests/ompi-mpiexec
CLEANFILES += tests/ompi-mpiexec
endif

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
# Left out: the calls and replays of 4 GiB (t_huge_4g, t_huge_4g_remote,
# t_replay_4g), which under ASan cost minutes and take the small tests'
# code paths on more bytes; slurm-check.sh and slurm-drain.sh (srun starts
# their programs, not MPIEXEC); cluster-check.sh, which runs the MPI tests
# again across emulated nodes (the other cluster tests still take the
# driver's cross-node paths): CI has 75 minutes for everything.  And the
# tests that start no MPI process through MPIEXEC, so would only repeat
# make check: the unit tests, the benchmarks' (MPI_PREFIX's mpiexec) and
# server-check.sh (bbserver and bbsctl alone).
BIG_TESTS = mpiio-tests/t_huge_4g.mpi mpiio-tests/t_huge_4g_remote.mpi \
	mpiio-tests/t_replay_4g.mpi
SANITIZE_MPI_TESTS = $(filter-out $(BIG_TESTS) tests/cluster/cluster-check.sh \
	tests/cluster/slurm-check.sh tests/cluster/slurm-drain.sh \
	tests/cluster/server-check.sh tests/unit/% tests/bench/%,$(TESTS))
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

# --- the MPI tests on MPICH's ch4:ucx device (issue 33) --------------------
# The device Debian's own MPICH 4.0.2 has (ch4 over UCX, hydra, Slurm),
# built with the driver beside the default ch3 one (its own cache key;
# tools/build-mpich.sh, BBFS_MPICH_DEVICE=ch4:ucx), then the MPI tests and
# ROMIO's with its mpiexec and its libmpi (the test programs are not
# rebuilt: their runpath gives way to LD_LIBRARY_PATH), the MPI tests
# across 2 and 3 emulated nodes (UCX over TCP between them), and Debian's
# libhdf5-mpich on it.  CI runs it.
UCX_PREFIX = $(abs_top_builddir)/mpich-ucx
# The MPI tests run across 2 and 3 nodes (cluster-check.sh) with node-local
# logs, not again on one node: with 2 processes a node, each spec takes the
# device's shared-memory and network paths both.  The 4 GiB calls are left
# out: the datatype engine and ROMIO are ch3's, which make check runs them
# on.  (On one node the specs took 1.5 minutes of CI's 75, the 4 GiB ones 4.)
UCX_CHECK_TESTS = mpiio-tests/romio-tests.sh tests/cluster/cluster-check.sh \
	tests/hdf5/debian-hdf5.sh
.PHONY: check-ucx mpich-ucx
mpich-ucx:
	BBFS_MPICH_DEVICE=ch4:ucx $(top_srcdir)/tools/build-mpich.sh $(abs_top_builddir) "$(MPICH_SOURCE)"
tests/ucx-mpiexec: Makefile
	@mkdir -p tests
	@{ echo '#!/bin/sh'; \
	   echo '# mpiexec of the ch4:ucx MPICH (made by make check-ucx)'; \
	   echo 'LD_LIBRARY_PATH="$(UCX_PREFIX)/lib$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH}"; export LD_LIBRARY_PATH'; \
	   echo 'exec "$(UCX_PREFIX)/bin/mpiexec" "$$@"'; } > $@
	@chmod +x $@
CLEANFILES += tests/ucx-mpiexec
check-ucx: mpich-ucx tests/ucx-mpiexec
	CLUSTER_CHECK_SHARED_LOGS=no $(MAKE) $(AM_MAKEFLAGS) check \
	  MPIEXEC=$(abs_top_builddir)/tests/ucx-mpiexec \
	  MPI_PREFIX=$(UCX_PREFIX) TESTS="$(UCX_CHECK_TESTS)"

# --- the MPI tests on Open MPI (issue 33) ---------------------------------
# A copy of this checkout, configured --with-mpi=openmpi, in ./ompi-check
# (tools/check-other-mpi.sh); each MPI test there compares bbfs: runs with
# ufs: ones under the same Open MPI, and ROMIO's own tests run from Open
# MPI's ROMIO.  CI runs it.
# Left out: t_large_count_types, MPI-4's large-count constructors (and
# mpich-type-c-int-contents.patch, which they test): Open MPI 5.0 has none;
# t_huge_4g_remote, whose big read goes through bbserver, not MPI.
OMPI_CHECK_TESTS = $(filter-out mpiio-tests/t_large_count_types.mpi mpiio-tests/t_huge_4g_remote.mpi,\
	$(filter mpiio-tests/%.mpi,$(TESTS))) mpiio-tests/romio-tests.sh \
	mpiio-tests/ompi-selects-bbfs.sh tests/cluster/ompi-nodes-check.sh
.PHONY: check-ompi
check-ompi:
	$(top_srcdir)/tools/check-other-mpi.sh openmpi $(abs_top_builddir)/ompi-check \
	  TESTS="$(OMPI_CHECK_TESTS)"
