# MPICH 4.0.2 with the bbfs ROMIO driver (adio/ad_bbfs), built and cached by
# tools/build-mpich.sh and published as $(top_builddir)/mpich.  MPI programs
# of this project compile with the ordinary compiler against that prefix.

MPICH_PREFIX = $(abs_top_builddir)/mpich
MPIEXEC = $(MPICH_PREFIX)/bin/mpiexec
MPI_CPPFLAGS = -I$(MPICH_PREFIX)/include
MPI_LIBS = -L$(MPICH_PREFIX)/lib -lmpi
# MPI programs find libmpi where it was built; harmless for the others.
AM_LDFLAGS = -Wl,-rpath,$(MPICH_PREFIX)/lib

# Driver and logfs sources are compiled inside MPICH's ROMIO: any change
# there re-runs the (incremental, seconds-long) MPICH build.
BBFS_MPICH_INPUTS = \
	$(wildcard $(top_srcdir)/adio/ad_bbfs/*.[ch] $(top_srcdir)/adio/ad_bbfs/Makefile.mk) \
	$(wildcard $(top_srcdir)/logfs/*.[ch]) \
	$(wildcard $(top_srcdir)/adio/mpich-patches/*.patch) \
	$(top_srcdir)/tools/build-mpich.sh

mpich.stamp: $(BBFS_MPICH_INPUTS)
	$(AM_V_GEN)$(top_srcdir)/tools/build-mpich.sh $(abs_top_builddir) "$(MPICH_SOURCE)"
	@touch $@

BUILT_SOURCES += mpich.stamp
CLEANFILES += mpich.stamp
EXTRA_DIST += $(BBFS_MPICH_INPUTS)

# `make mpich` rebuilds MPICH's part explicitly (e.g. after editing MPICH sources).
mpich: 
	rm -f mpich.stamp && $(MAKE) $(AM_MAKEFLAGS) mpich.stamp
.PHONY: mpich
