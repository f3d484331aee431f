# Other programs' test suites on bbfs: PnetCDF 1.12.3 and HDF5 1.10.8, from
# Debian's source packages, and mpi4py 4.0.3 from PyPI, built against ./mpich
# and cached by tools/build-clients.sh; %reldir%/run-clients.sh runs
# PnetCDF's `make check` and `make ptest`, HDF5's testpar programs and
# mpi4py's test_io and test_file with their files on $(CLIENTS_PREFIX).  Not part of `make check` (a cold build takes minutes and
# the suites run for long): `make check-clients`, or with the reference
# driver `make check-clients CLIENTS_PREFIX=ufs:`.  See docs/clients.md.

CLIENTS_DIR = $(abs_top_builddir)/%reldir%
CLIENTS_PREFIX = bbfs:

build-clients: all
	$(top_srcdir)/tools/build-clients.sh $(MPI_PREFIX) $(CLIENTS_DIR)

check-clients: build-clients
	BUILDDIR='$(abs_top_builddir)' MPI_PREFIX='$(MPI_PREFIX)' CLIENTS_MPIEXEC='$(CLIENTS_MPIEXEC)' \
	CLIENTS_DIR='$(CLIENTS_DIR)' CLIENTS_PREFIX='$(CLIENTS_PREFIX)' \
	CLIENTS_EXCLUDE='$(CLIENTS_EXCLUDE)' CLIENTS_EXCLUDE_WHY='$(CLIENTS_EXCLUDE_WHY)' \
	$(top_srcdir)/%reldir%/run-clients.sh

# The same suites with their processes on 2 emulated nodes, each with its own
# node-local log directory (root; tests/cluster/cluster.sh).
CLIENTS_NODES_EXCLUDE = hdf5 t_cache_image
CLIENTS_NODES_EXCLUDE_WHY = 13 minutes on 2 emulated nodes: check-clients runs it on one node
check-clients-nodes: build-clients
	BUILDDIR='$(abs_top_builddir)' MPI_PREFIX='$(MPI_PREFIX)' \
	CLIENTS_NODES_MPIEXEC='$(CLIENTS_NODES_MPIEXEC)' \
	CLIENTS_DIR='$(CLIENTS_DIR)' CLIENTS_PREFIX='$(CLIENTS_PREFIX)' \
	CLIENTS_EXCLUDE='$(CLIENTS_NODES_EXCLUDE)' CLIENTS_EXCLUDE_WHY='$(CLIENTS_NODES_EXCLUDE_WHY)' \
	$(top_srcdir)/%reldir%/run-clients-nodes.sh

# The same suites on MPICH's ch4:ucx device (issue 33; make check-ucx
# builds it): the libraries and tests built for the default MPICH run on
# the ch4:ucx one's libmpi (same MPICH, same ABI; their runpath gives way to
# the LD_LIBRARY_PATH that tests/ucx-mpiexec sets).
check-clients-ucx: mpich-ucx tests/ucx-mpiexec build-clients
	$(MAKE) $(AM_MAKEFLAGS) check-clients CLIENTS_MPIEXEC=$(abs_top_builddir)/tests/ucx-mpiexec
# And across 2 emulated nodes on it, UCX over TCP between them (CI runs
# this one, and check-clients on one node of the default build).
check-clients-nodes-ucx: mpich-ucx tests/ucx-mpiexec build-clients
	$(MAKE) $(AM_MAKEFLAGS) check-clients-nodes \
	  CLIENTS_NODES_MPIEXEC=$(abs_top_builddir)/tests/ucx-mpiexec

clean-local: clean-clients-work
clean-clients-work:
	rm -rf %reldir%/work

EXTRA_DIST += %reldir%/run-clients.sh %reldir%/run-clients-nodes.sh tools/build-clients.sh
.PHONY: build-clients check-clients check-clients-nodes check-clients-ucx check-clients-nodes-ucx \
	clean-clients-work
