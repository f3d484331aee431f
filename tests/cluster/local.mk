# Tests across emulated nodes (cluster.sh: Linux namespaces on this
# machine, docs/cluster.md).  They need root, as CI has.

check_PROGRAMS += %reldir%/t_nodes
%canon_reldir%_t_nodes_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_nodes_LDADD = $(MPI_LIBS)
TESTS += %reldir%/cluster-check.sh %reldir%/nodelocal-check.sh %reldir%/server-check.sh \
	%reldir%/server-path-check.sh
EXTRA_DIST += %reldir%/cluster.sh %reldir%/cluster-check.sh %reldir%/nodelocal-check.sh \
	%reldir%/server-check.sh %reldir%/server-path-check.sh
