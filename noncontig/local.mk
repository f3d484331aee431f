# Benchmarks: measured, never asserted in tests.  `make demo` is the README's
# main job: the noncontig benchmark on bbfs: against stock ROMIO, 4 ranks.

noinst_PROGRAMS += %reldir%/noncontig
%canon_reldir%_noncontig_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_noncontig_LDADD = $(MPI_LIBS)

DEMO_DIR = $(abs_top_builddir)/demo
demo: all
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	BBFS_LOGDIR=$(DEMO_DIR) $(MPIEXEC) -n 4 %reldir%/noncontig -dir $(DEMO_DIR)
	@rm -rf $(DEMO_DIR)
.PHONY: demo

noinst_PROGRAMS += %reldir%/model-cost
%canon_reldir%_model_cost_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_model_cost_LDADD = $(MPI_LIBS)

# logfs-bench: the log layer alone, without MPI.
noinst_PROGRAMS += %reldir%/logfs-bench
%canon_reldir%_logfs_bench_SOURCES = %reldir%/logfs-bench.c
%canon_reldir%_logfs_bench_CPPFLAGS = $(LOGFS_CPPFLAGS)
%canon_reldir%_logfs_bench_CFLAGS = $(LOGFS_CFLAGS)
%canon_reldir%_logfs_bench_LDADD = $(LOGFS_LIB) @PMEM_LIBS@

# model-reads: random reads of others' data after a write phase, by model
# (the consistency-models paper's comparison; run it across nodes).
noinst_PROGRAMS += %reldir%/model-reads
%canon_reldir%_model_reads_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_model_reads_LDADD = $(MPI_LIBS)
