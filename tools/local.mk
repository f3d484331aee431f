# The command-line tools: bbfs-inspect reads logs (logfs only), bbfs-replay
# replays them (MPI).

bin_PROGRAMS += %reldir%/bbfs-replay
%canon_reldir%_bbfs_replay_SOURCES = %reldir%/bbfs-replay.c
%canon_reldir%_bbfs_replay_CPPFLAGS = $(MPI_CPPFLAGS) $(LOGFS_CPPFLAGS)
%canon_reldir%_bbfs_replay_LDADD = $(LOGFS_LIB) $(MPI_LIBS) @PMEM_LIBS@

bin_PROGRAMS += %reldir%/bbfs-inspect
%canon_reldir%_bbfs_inspect_SOURCES = %reldir%/bbfs-inspect.c
%canon_reldir%_bbfs_inspect_CPPFLAGS = $(LOGFS_CPPFLAGS)
%canon_reldir%_bbfs_inspect_CFLAGS = $(LOGFS_CFLAGS)
%canon_reldir%_bbfs_inspect_LDADD = $(LOGFS_LIB) @PMEM_LIBS@
