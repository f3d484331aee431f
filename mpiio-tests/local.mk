# MPI-level tests: each program runs under mpiexec on ufs: (reference) and
# on bbfs: variants, and the files must match byte for byte.  The .mpi spec
# beside each program lists process counts and name prefixes; the runner is
# %reldir%/run-mpiio-test.sh.  ROMIO's own test programs run through
# %reldir%/romio-tests.sh, built from the MPICH source that was fetched.

noinst_LIBRARIES += %reldir%/libmpiiotest.a
%canon_reldir%_libmpiiotest_a_SOURCES = %reldir%/testlib.c %reldir%/testlib.h
%canon_reldir%_libmpiiotest_a_CPPFLAGS = $(MPI_CPPFLAGS)
MPIIO_TEST_LDADD = %reldir%/libmpiiotest.a $(MPI_LIBS)

TEST_EXTENSIONS = .mpi
MPI_LOG_COMPILER = $(top_srcdir)/%reldir%/run-mpiio-test.sh
AM_TESTS_ENVIRONMENT = MPIEXEC='$(MPIEXEC)'; BUILDDIR='$(abs_top_builddir)'; \
	MPI_PREFIX='$(MPI_PREFIX)'; export MPIEXEC BUILDDIR MPI_PREFIX;
EXTRA_DIST += %reldir%/run-mpiio-test.sh %reldir%/romio-tests.sh tests/stacks-at.sh
# (Open MPI only, make check-ompi: a bbfs: name selects ROMIO there; MPI
# tests across 2 emulated nodes under PRRTE)
if BBFS_OPEN_MPI
TESTS += %reldir%/ompi-selects-bbfs.sh tests/cluster/ompi-nodes-check.sh
endif
EXTRA_DIST += %reldir%/ompi-selects-bbfs.sh tests/cluster/ompi-nodes-check.sh

check_PROGRAMS += %reldir%/t_contig
%canon_reldir%_t_contig_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_contig_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_contig.mpi
EXTRA_DIST += %reldir%/t_contig.mpi

check_PROGRAMS += %reldir%/t_vector
%canon_reldir%_t_vector_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_vector_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_vector.mpi
EXTRA_DIST += %reldir%/t_vector.mpi

check_PROGRAMS += %reldir%/t_views
%canon_reldir%_t_views_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_views_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_views.mpi
EXTRA_DIST += %reldir%/t_views.mpi

check_PROGRAMS += %reldir%/t_replay_rounds
%canon_reldir%_t_replay_rounds_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_replay_rounds_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_replay_rounds.mpi
EXTRA_DIST += %reldir%/t_replay_rounds.mpi

check_PROGRAMS += %reldir%/t_random
%canon_reldir%_t_random_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_random_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_RANDOM_SPECS = %reldir%/t_random.mpi %reldir%/t_random_commit.mpi \
	%reldir%/t_random_posix.mpi %reldir%/t_random_replay.mpi \
	%reldir%/t_random_collective.mpi
TESTS += $(MPIIO_RANDOM_SPECS)
EXTRA_DIST += $(MPIIO_RANDOM_SPECS)

check_PROGRAMS += %reldir%/t_hints_roundtrip
%canon_reldir%_t_hints_roundtrip_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_hints_roundtrip_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_hints_roundtrip.mpi
EXTRA_DIST += %reldir%/t_hints_roundtrip.mpi

check_PROGRAMS += %reldir%/t_force
%canon_reldir%_t_force_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_force_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_force.mpi
EXTRA_DIST += %reldir%/t_force.mpi

check_PROGRAMS += %reldir%/t_setsize_grow
%canon_reldir%_t_setsize_grow_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_setsize_grow_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_GROW_SPECS = %reldir%/t_setsize_grow.mpi %reldir%/t_setsize_grow_never.mpi \
	%reldir%/t_setsize_grow_posix.mpi
TESTS += $(MPIIO_GROW_SPECS)
EXTRA_DIST += $(MPIIO_GROW_SPECS)

check_PROGRAMS += %reldir%/t_handles
%canon_reldir%_t_handles_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_handles_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_HANDLES_SPECS = %reldir%/t_handles.mpi %reldir%/t_handles_commit.mpi
TESTS += $(MPIIO_HANDLES_SPECS)
EXTRA_DIST += $(MPIIO_HANDLES_SPECS)

check_PROGRAMS += %reldir%/t_reopen_live
%canon_reldir%_t_reopen_live_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_reopen_live_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_REOPEN_LIVE_SPECS = %reldir%/t_reopen_live.mpi %reldir%/t_reopen_live_session.mpi
TESTS += $(MPIIO_REOPEN_LIVE_SPECS)
EXTRA_DIST += $(MPIIO_REOPEN_LIVE_SPECS)

# (its PMPI_Gather and PMPI_Gatherv count the MPI library's calls: -rdynamic)
check_PROGRAMS += %reldir%/t_open_gathers
%canon_reldir%_t_open_gathers_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_open_gathers_LDFLAGS = $(AM_LDFLAGS) -rdynamic
%canon_reldir%_t_open_gathers_LDADD = $(MPIIO_TEST_LDADD) -ldl
TESTS += %reldir%/t_open_gathers.mpi
EXTRA_DIST += %reldir%/t_open_gathers.mpi

check_PROGRAMS += %reldir%/t_agree
%canon_reldir%_t_agree_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_agree_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_AGREE_SPECS = %reldir%/t_agree.mpi %reldir%/t_agree_session.mpi
TESTS += $(MPIIO_AGREE_SPECS)
EXTRA_DIST += $(MPIIO_AGREE_SPECS)

check_PROGRAMS += %reldir%/t_session_flush
%canon_reldir%_t_session_flush_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_session_flush_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_session_flush.mpi
EXTRA_DIST += %reldir%/t_session_flush.mpi

check_PROGRAMS += %reldir%/t_handle_order
%canon_reldir%_t_handle_order_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_handle_order_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_HANDLE_ORDER_SPECS = %reldir%/t_handle_order.mpi %reldir%/t_handle_order_posix.mpi
TESTS += $(MPIIO_HANDLE_ORDER_SPECS)
EXTRA_DIST += $(MPIIO_HANDLE_ORDER_SPECS)

check_PROGRAMS += %reldir%/t_sync_posix
%canon_reldir%_t_sync_posix_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_sync_posix_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_sync_posix.mpi
EXTRA_DIST += %reldir%/t_sync_posix.mpi

check_PROGRAMS += %reldir%/t_waw_posix
%canon_reldir%_t_waw_posix_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_waw_posix_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_waw_posix.mpi
EXTRA_DIST += %reldir%/t_waw_posix.mpi

check_PROGRAMS += %reldir%/t_replay_nomem
%canon_reldir%_t_replay_nomem_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_replay_nomem_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_replay_nomem.mpi %reldir%/t_replay_flush.mpi
EXTRA_DIST += %reldir%/t_replay_nomem.mpi %reldir%/t_replay_flush.mpi

# Calls and replay pieces of 4 GiB and more: past 2^32, so past 2^31 too
# (2 GiB twins of these ran until session 56 and found nothing these miss:
# a length cut to int or to uint32 comes out 1 MiB here, wrong bytes).
check_PROGRAMS += %reldir%/t_replay_pack %reldir%/t_replay_4g
%canon_reldir%_t_replay_pack_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_replay_pack_LDADD = $(MPIIO_TEST_LDADD)
%canon_reldir%_t_replay_4g_SOURCES = %reldir%/t_replay_big.c
%canon_reldir%_t_replay_4g_CPPFLAGS = $(MPI_CPPFLAGS) -DBIG_CHUNKS=17
%canon_reldir%_t_replay_4g_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_replay_pack.mpi %reldir%/t_replay_4g.mpi
EXTRA_DIST += %reldir%/t_replay_pack.mpi %reldir%/t_replay_4g.mpi

# Single calls of 4 GiB and more (t_huge_calls.c says what each one broke).
check_PROGRAMS += %reldir%/t_huge_4g %reldir%/t_huge_4g_remote
%canon_reldir%_t_huge_4g_SOURCES = %reldir%/t_huge_calls.c
%canon_reldir%_t_huge_4g_CPPFLAGS = $(MPI_CPPFLAGS) -DHUGE_MIB=4097
%canon_reldir%_t_huge_4g_LDADD = $(MPIIO_TEST_LDADD)
%canon_reldir%_t_huge_4g_remote_SOURCES = %reldir%/t_huge_calls.c
%canon_reldir%_t_huge_4g_remote_CPPFLAGS = $(MPI_CPPFLAGS) -DHUGE_MIB=4097 -DHUGE_REMOTE_ONLY
%canon_reldir%_t_huge_4g_remote_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_huge_4g.mpi %reldir%/t_huge_4g_remote.mpi
EXTRA_DIST += %reldir%/t_huge_4g.mpi %reldir%/t_huge_4g_remote.mpi

check_PROGRAMS += %reldir%/t_many_blocks
%canon_reldir%_t_many_blocks_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_many_blocks_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_many_blocks.mpi
EXTRA_DIST += %reldir%/t_many_blocks.mpi

check_PROGRAMS += %reldir%/t_collorder
%canon_reldir%_t_collorder_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_collorder_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_COLLORDER_SPECS = %reldir%/t_collorder.mpi %reldir%/t_collorder_posix.mpi \
	%reldir%/t_collorder_replay.mpi %reldir%/t_collorder_collective.mpi
TESTS += $(MPIIO_COLLORDER_SPECS)
EXTRA_DIST += $(MPIIO_COLLORDER_SPECS)

check_PROGRAMS += %reldir%/t_view_extend
%canon_reldir%_t_view_extend_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_view_extend_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_VIEW_EXTEND_SPECS = %reldir%/t_view_extend.mpi %reldir%/t_view_extend_collective.mpi \
	%reldir%/t_view_extend_posix.mpi
TESTS += $(MPIIO_VIEW_EXTEND_SPECS)
EXTRA_DIST += $(MPIIO_VIEW_EXTEND_SPECS)

check_PROGRAMS += %reldir%/t_hindexed
%canon_reldir%_t_hindexed_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_hindexed_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_hindexed.mpi
EXTRA_DIST += %reldir%/t_hindexed.mpi

check_PROGRAMS += %reldir%/t_subarray
%canon_reldir%_t_subarray_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_subarray_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_subarray.mpi
EXTRA_DIST += %reldir%/t_subarray.mpi

check_PROGRAMS += %reldir%/t_epochs
%canon_reldir%_t_epochs_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_epochs_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_epochs.mpi
EXTRA_DIST += %reldir%/t_epochs.mpi

check_PROGRAMS += %reldir%/t_setsize
%canon_reldir%_t_setsize_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_setsize_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_setsize.mpi
EXTRA_DIST += %reldir%/t_setsize.mpi

check_PROGRAMS += %reldir%/t_shared_fp
%canon_reldir%_t_shared_fp_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_shared_fp_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_shared_fp.mpi
EXTRA_DIST += %reldir%/t_shared_fp.mpi

check_PROGRAMS += %reldir%/t_shared_fp_close
%canon_reldir%_t_shared_fp_close_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_shared_fp_close_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_shared_fp_close.mpi %reldir%/t_shared_fp_close_remote.mpi \
    %reldir%/t_shared_fp_close_never.mpi
EXTRA_DIST += %reldir%/t_shared_fp_close.mpi %reldir%/t_shared_fp_close_remote.mpi \
    %reldir%/t_shared_fp_close_never.mpi

check_PROGRAMS += %reldir%/t_names
%canon_reldir%_t_names_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_names_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_names.mpi %reldir%/t_names_remote.mpi
EXTRA_DIST += %reldir%/t_names.mpi %reldir%/t_names_remote.mpi

check_PROGRAMS += %reldir%/t_nonblocking
%canon_reldir%_t_nonblocking_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_nonblocking_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_nonblocking.mpi
EXTRA_DIST += %reldir%/t_nonblocking.mpi

check_PROGRAMS += %reldir%/t_delete
%canon_reldir%_t_delete_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_delete_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_delete.mpi
EXTRA_DIST += %reldir%/t_delete.mpi

check_PROGRAMS += %reldir%/t_atomic
%canon_reldir%_t_atomic_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_atomic_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_atomic.mpi
EXTRA_DIST += %reldir%/t_atomic.mpi

check_PROGRAMS += %reldir%/t_atomic_switch
%canon_reldir%_t_atomic_switch_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_atomic_switch_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_atomic_switch.mpi
EXTRA_DIST += %reldir%/t_atomic_switch.mpi

check_PROGRAMS += %reldir%/t_close_reopen_self
%canon_reldir%_t_close_reopen_self_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_close_reopen_self_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_close_reopen_self.mpi
EXTRA_DIST += %reldir%/t_close_reopen_self.mpi

check_PROGRAMS += %reldir%/t_info
%canon_reldir%_t_info_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_info_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_info.mpi
EXTRA_DIST += %reldir%/t_info.mpi

check_PROGRAMS += %reldir%/t_hintsfile
%canon_reldir%_t_hintsfile_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_hintsfile_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_hintsfile.mpi
EXTRA_DIST += %reldir%/t_hintsfile.mpi

check_PROGRAMS += %reldir%/t_errors
%canon_reldir%_t_errors_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_errors_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_errors.mpi
EXTRA_DIST += %reldir%/t_errors.mpi

check_PROGRAMS += %reldir%/t_crash %reldir%/t_reopen %reldir%/t_badlog %reldir%/t_consistency
mpiio_tests_t_consistency_CPPFLAGS = $(MPI_CPPFLAGS)
mpiio_tests_t_consistency_LDADD = $(MPIIO_TEST_LDADD)
mpiio_tests_t_crash_CPPFLAGS = $(MPI_CPPFLAGS)
mpiio_tests_t_crash_LDADD = $(MPIIO_TEST_LDADD)
mpiio_tests_t_reopen_CPPFLAGS = $(MPI_CPPFLAGS)
mpiio_tests_t_reopen_LDADD = $(MPIIO_TEST_LDADD)
mpiio_tests_t_badlog_CPPFLAGS = $(MPI_CPPFLAGS)
mpiio_tests_t_badlog_LDADD = $(MPIIO_TEST_LDADD)
# Logs replayed by a second job, with other process counts; crash recovery;
# deferred replay; bad input around the logs.
MPIIO_LOG_SPECS = %reldir%/t_epochs_replay.mpi %reldir%/t_vector_replay.mpi \
	%reldir%/t_crash.mpi %reldir%/t_reopen.mpi %reldir%/t_badlog.mpi \
	%reldir%/t_consistency.mpi %reldir%/t_epochs_pmem.mpi %reldir%/t_replay_rounds_tool.mpi
TESTS += $(MPIIO_LOG_SPECS)
EXTRA_DIST += $(MPIIO_LOG_SPECS)
check_PROGRAMS += tools/bbfs-replay

TESTS += %reldir%/replay-tool.sh
EXTRA_DIST += %reldir%/replay-tool.sh
check_PROGRAMS += %reldir%/t_background
%canon_reldir%_t_background_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_background_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/server-drain.sh
EXTRA_DIST += %reldir%/server-drain.sh

check_PROGRAMS += %reldir%/t_twojobs
%canon_reldir%_t_twojobs_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_twojobs_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/two-jobs.sh
EXTRA_DIST += %reldir%/two-jobs.sh

TESTS += %reldir%/romio-tests.sh
clean-local: clean-mpiio-work
clean-mpiio-work:
	rm -rf mpiio-tests/work mpiio-tests/romio
.PHONY: clean-mpiio-work

# The crash matrix: SIGKILL at each fault point, recovery, judgement.
check_PROGRAMS += %reldir%/t_crashpoints
%canon_reldir%_t_crashpoints_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_crashpoints_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/crash-matrix.sh %reldir%/fault-errors.sh %reldir%/short-writes.sh %reldir%/durable-flush.sh \
	%reldir%/cleanup-faults.sh \
	%reldir%/security.sh %reldir%/soak.sh
EXTRA_DIST += %reldir%/crash-matrix.sh %reldir%/fault-errors.sh %reldir%/short-writes.sh %reldir%/durable-flush.sh \
	%reldir%/cleanup-faults.sh \
	%reldir%/security.sh %reldir%/soak.sh \
	%reldir%/crashpoints-lib.sh

check_PROGRAMS += %reldir%/t_lognames
%canon_reldir%_t_lognames_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_lognames_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_lognames.mpi
EXTRA_DIST += %reldir%/t_lognames.mpi

check_PROGRAMS += %reldir%/t_large_count_types
%canon_reldir%_t_large_count_types_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_large_count_types_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_large_count_types.mpi
EXTRA_DIST += %reldir%/t_large_count_types.mpi

check_PROGRAMS += %reldir%/t_subarray_pointer
%canon_reldir%_t_subarray_pointer_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_subarray_pointer_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_subarray_pointer.mpi
EXTRA_DIST += %reldir%/t_subarray_pointer.mpi

# MPI's own synchronization orders writes before reads (causal, the
# default); under mpiio the same reads are stale.
check_PROGRAMS += %reldir%/t_overlap_strided
%canon_reldir%_t_overlap_strided_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_overlap_strided_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_overlap_strided.mpi
EXTRA_DIST += %reldir%/t_overlap_strided.mpi

check_PROGRAMS += %reldir%/t_mpi_sync
%canon_reldir%_t_mpi_sync_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_mpi_sync_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_mpi_sync.mpi %reldir%/t_mpi_sync_remote.mpi %reldir%/t_mpi_sync_mpiio.mpi
EXTRA_DIST += %reldir%/t_mpi_sync.mpi %reldir%/t_mpi_sync_remote.mpi %reldir%/t_mpi_sync_mpiio.mpi

check_PROGRAMS += %reldir%/t_private
%canon_reldir%_t_private_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_private_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_private.mpi
EXTRA_DIST += %reldir%/t_private.mpi

# (the program is a cluster test's: across nodes in server-path-check.sh)
TESTS += %reldir%/t_late_readers.mpi %reldir%/t_late_readers_pending.mpi
EXTRA_DIST += %reldir%/t_late_readers.mpi %reldir%/t_late_readers_pending.mpi

check_PROGRAMS += %reldir%/t_open_fails
%canon_reldir%_t_open_fails_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_open_fails_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_open_fails.mpi %reldir%/t_open_fails_rdonly.mpi \
    %reldir%/t_open_fails_remote.mpi %reldir%/t_open_fails_self.mpi
EXTRA_DIST += %reldir%/t_open_fails.mpi %reldir%/t_open_fails_rdonly.mpi \
    %reldir%/t_open_fails_remote.mpi %reldir%/t_open_fails_self.mpi

check_PROGRAMS += %reldir%/t_lower_guess
%canon_reldir%_t_lower_guess_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_lower_guess_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_lower_guess.mpi %reldir%/t_lower_guess_wrong.mpi \
    %reldir%/t_lower_guess_paused.mpi
EXTRA_DIST += %reldir%/t_lower_guess.mpi %reldir%/t_lower_guess_wrong.mpi \
    %reldir%/t_lower_guess_paused.mpi

check_PROGRAMS += %reldir%/t_self_handles
%canon_reldir%_t_self_handles_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_self_handles_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_self_handles.mpi
EXTRA_DIST += %reldir%/t_self_handles.mpi

check_PROGRAMS += %reldir%/t_lazy
%canon_reldir%_t_lazy_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_lazy_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_lazy.mpi
EXTRA_DIST += %reldir%/t_lazy.mpi

check_PROGRAMS += %reldir%/t_own_replay
%canon_reldir%_t_own_replay_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_own_replay_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_own_replay.mpi
EXTRA_DIST += %reldir%/t_own_replay.mpi

check_PROGRAMS += %reldir%/t_private_fault
%canon_reldir%_t_private_fault_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_private_fault_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_private_fault.mpi
EXTRA_DIST += %reldir%/t_private_fault.mpi

check_PROGRAMS += %reldir%/t_readall
%canon_reldir%_t_readall_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_readall_LDADD = $(MPIIO_TEST_LDADD)
TESTS += %reldir%/t_readall.mpi
EXTRA_DIST += %reldir%/t_readall.mpi

check_PROGRAMS += %reldir%/t_close_held
%canon_reldir%_t_close_held_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_t_close_held_LDADD = $(MPIIO_TEST_LDADD)
MPIIO_CLOSE_HELD_SPECS = %reldir%/t_close_held.mpi %reldir%/t_close_held_never.mpi
TESTS += $(MPIIO_CLOSE_HELD_SPECS)
EXTRA_DIST += $(MPIIO_CLOSE_HELD_SPECS)
