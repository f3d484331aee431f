# Command-line tools that need MPI (bbfs-inspect, which does not, is built
# with logfs).

bin_PROGRAMS += %reldir%/bbfs-replay
%canon_reldir%_bbfs_replay_SOURCES = %reldir%/bbfs-replay.c
%canon_reldir%_bbfs_replay_CPPFLAGS = $(MPI_CPPFLAGS) $(LOGFS_CPPFLAGS)
%canon_reldir%_bbfs_replay_LDADD = $(LOGFS_LIB) $(MPI_LIBS) @PMEM_LIBS@
