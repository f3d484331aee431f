# Tests across emulated nodes (cluster.sh: Linux namespaces on this
# machine, docs/cluster.md).  They need root, as CI has.

check_PROGRAMS += %reldir%/t_nodes %reldir%/t_readback %reldir%/t_models %reldir%/t_server_kill \
	%reldir%/t_split_readers %reldir%/t_peer_handles %reldir%/t_twin_opens \
	%reldir%/t_twin_replay %reldir%/t_clock_skew %reldir%/t_server_restart \
	%reldir%/t_link_cut %reldir%/t_node_lost %reldir%/t_late_readers
%canon_reldir%_t_nodes_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_nodes_LDADD = $(MPI_LIBS)
%canon_reldir%_t_readback_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_readback_LDADD = $(MPI_LIBS)
%canon_reldir%_t_split_readers_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_split_readers_LDADD = $(MPI_LIBS)
%canon_reldir%_t_peer_handles_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_peer_handles_LDADD = $(MPI_LIBS)
%canon_reldir%_t_twin_opens_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_twin_opens_LDADD = $(MPI_LIBS)
%canon_reldir%_t_twin_replay_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_twin_replay_LDADD = $(MPI_LIBS)
%canon_reldir%_t_link_cut_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_link_cut_LDADD = $(MPI_LIBS)
%canon_reldir%_t_late_readers_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_late_readers_LDADD = $(MPI_LIBS)
%canon_reldir%_t_node_lost_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_node_lost_LDADD = $(MPI_LIBS)
%canon_reldir%_t_clock_skew_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_clock_skew_LDADD = $(MPI_LIBS)
%canon_reldir%_t_models_CPPFLAGS = $(MPI_CPPFLAGS) -I$(srcdir)/bbserver
%canon_reldir%_t_models_LDADD = $(BBS_LIB) $(LOGFS_LIB) $(MPI_LIBS) @UCX_LIBS@ @PMEM_LIBS@
%canon_reldir%_t_server_kill_CPPFLAGS = $(MPI_CPPFLAGS) -I$(srcdir)/bbserver
%canon_reldir%_t_server_kill_LDADD = $(BBS_LIB) $(LOGFS_LIB) $(MPI_LIBS) @UCX_LIBS@ @PMEM_LIBS@
%canon_reldir%_t_server_restart_CPPFLAGS = $(MPI_CPPFLAGS) -I$(srcdir)/bbserver
%canon_reldir%_t_server_restart_LDADD = $(BBS_LIB) $(LOGFS_LIB) $(MPI_LIBS) @UCX_LIBS@ @PMEM_LIBS@
TESTS += %reldir%/cluster-check.sh %reldir%/nodelocal-check.sh %reldir%/server-check.sh \
	%reldir%/server-path-check.sh %reldir%/node-failures.sh %reldir%/soak-nodes.sh \
	%reldir%/clock-skew.sh %reldir%/slurm-check.sh %reldir%/drain-nodes.sh \
	%reldir%/slurm-drain.sh
EXTRA_DIST += %reldir%/off_node.h %reldir%/node_server.h %reldir%/cluster.sh %reldir%/cluster-check.sh %reldir%/nodelocal-check.sh \
	%reldir%/server-check.sh %reldir%/server-path-check.sh %reldir%/node-failures.sh \
	%reldir%/soak-nodes.sh %reldir%/clock-skew.sh %reldir%/slurm.sh %reldir%/slurm-check.sh \
	%reldir%/drain-nodes.sh %reldir%/slurm-drain.sh
