# Benchmarks: measured, never asserted in tests (tests/bench checks that the
# tools run and write well-formed CSV and plots).  `make demo` is the
# README's main job: the noncontig benchmark on bbfs: against stock ROMIO,
# 4 ranks, 64 MiB per file at 8 B, 64 B and 4 KiB elements, medians of 5.
# `make performance` makes docs/performance.md's CSV and plots.

noinst_PROGRAMS += %reldir%/noncontig
%canon_reldir%_noncontig_SOURCES = %reldir%/noncontig.c %reldir%/bench.c %reldir%/bench.h
EXTRA_DIST += %reldir%/plot.py %reldir%/performance.sh %reldir%/scaling.sh %reldir%/h5-bench.sh %reldir%/h5-strided.c %reldir%/h5-hyperslab.c %reldir%/h5-check.h

# workloads: the consistency-models paper's synthetic workloads, by model.
noinst_PROGRAMS += %reldir%/workloads
%canon_reldir%_workloads_SOURCES = %reldir%/workloads.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_workloads_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_workloads_LDADD = $(MPI_LIBS)
%canon_reldir%_noncontig_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_noncontig_LDADD = $(MPI_LIBS)

DEMO_DIR = $(abs_top_builddir)/demo
demo: all
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	BBFS_LOGDIR=$(DEMO_DIR) $(MPIEXEC) -n 4 %reldir%/noncontig -dir $(DEMO_DIR) \
	  -elmtsize 8,64,4k -mib 64 -repeat 5
	@rm -rf $(DEMO_DIR)
.PHONY: demo

# The figures of docs/performance.md: noncontig and workloads on one node and
# on 2 and 3 emulated nodes, as CSV in perf/ and PNG plots beside it.
performance: all
	$(srcdir)/%reldir%/performance.sh $(abs_top_builddir)/perf
.PHONY: performance

# checkpoint: bbfs_replay=background's close and time to the canonical file
# against never, on_close and stock ROMIO, and a checkpoint loop with the
# compute phases' slowdown while drains run (docs/drain.md).
noinst_PROGRAMS += %reldir%/checkpoint
%canon_reldir%_checkpoint_SOURCES = %reldir%/checkpoint.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_checkpoint_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_checkpoint_LDADD = $(MPI_LIBS)
bench-drain: all
	@rm -rf $(DEMO_DIR) && mkdir -p $(DEMO_DIR)
	BBFS_LOGDIR=$(DEMO_DIR) $(MPIEXEC) -n 4 %reldir%/checkpoint -dir $(DEMO_DIR) \
	  -elmtsize 8,4k -mib 64 -repeat 5 -rounds 4 -compute 1
	@rm -rf $(DEMO_DIR)
.PHONY: bench-drain

# The same on 2 emulated nodes (root; tests/cluster), 2 processes on each:
# node0's bbserver drains each file, reading node1's logs through node1's
# server (docs/drain.md, "Several nodes").  Node-local logs and the files
# on tmpfs, as bench-drain's (here a tmpfs mounted for the run).
bench-drain-nodes: all
	@rm -rf $(DEMO_DIR)-nodes $(DEMO_DIR)-files && mkdir -p $(DEMO_DIR)-files
	mount -t tmpfs -o size=2g bbfs-bench $(DEMO_DIR)-files && \
	CLUSTER_HOSTS=node0:2,node1:2 $(srcdir)/tests/cluster/cluster.sh with 2 $(DEMO_DIR)-nodes \
	  env BUILD=$(abs_top_builddir) FILES=$(DEMO_DIR)-files sh -c \
	  'BBFS_LOGDIR=$$CLUSTER_DIR/local $$CLUSTER_DIR/mpiexec -n 4 $$BUILD/%reldir%/checkpoint \
	  -dir $$FILES -elmtsize 8,4k -mib 64 -repeat 7 -rounds 0'; \
	rc=$$?; umount $(DEMO_DIR)-files; rm -rf $(DEMO_DIR)-nodes $(DEMO_DIR)-files; exit $$rc
.PHONY: bench-drain-nodes

# interleave's figures (issue 31): the default model against mpiio with the
# syncs it needs, posix and stock ROMIO, 16 writes per allreduce, reads
# every 10 rounds; on one node with one process per core and with two, then
# on 2 emulated nodes (root; tests/cluster) with one and two per node.  The
# files and logs on tmpfs (a mount of their own; the nodes' own for logs).
IL_ARGS = -writes 16 -rounds 2000 -read-every 10 -repeats 7 -modes causal,mpiio,posix,ufs
bench-interleave: all
	@rm -rf $(DEMO_DIR)-il $(DEMO_DIR)-ilnodes && mkdir -p $(DEMO_DIR)-il
	mount -t tmpfs -o size=1g bbfs-bench $(DEMO_DIR)-il && mkdir $(DEMO_DIR)-il/logs && \
	for n in 2 4; do \
	  BBFS_LOGDIR=$(DEMO_DIR)-il/logs $(MPIEXEC) -n $$n %reldir%/interleave \
	    -dir $(DEMO_DIR)-il $(IL_ARGS) || break; \
	done && for per in 1 2; do \
	  CLUSTER_HOSTS=node0:$$per,node1:$$per $(srcdir)/tests/cluster/cluster.sh with 2 \
	    $(DEMO_DIR)-ilnodes env BUILD=$(abs_top_builddir) FILES=$(DEMO_DIR)-il N=$$((2 * per)) \
	    ARGS="$(IL_ARGS)" sh -c 'BBFS_LOGDIR=$$CLUSTER_DIR/local $$CLUSTER_DIR/mpiexec -n $$N \
	    $$BUILD/%reldir%/interleave -dir $$FILES $$ARGS' || break; \
	done; rc=$$?; umount $(DEMO_DIR)-il; rm -rf $(DEMO_DIR)-il $(DEMO_DIR)-ilnodes; exit $$rc
.PHONY: bench-interleave

noinst_PROGRAMS += %reldir%/model-cost
%canon_reldir%_model_cost_SOURCES = %reldir%/model-cost.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_model_cost_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_model_cost_LDADD = $(MPI_LIBS)

# call-cost: each MPI-IO call family on bbfs: against ufs:, with the
# collectives the library makes inside (it defines PMPI_ entry points, so it
# links with -rdynamic; docs/benchmarks.md, "cost per call").
noinst_PROGRAMS += %reldir%/call-cost
%canon_reldir%_call_cost_SOURCES = %reldir%/call-cost.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_call_cost_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_call_cost_LDFLAGS = $(AM_LDFLAGS) -rdynamic
%canon_reldir%_call_cost_LDADD = $(MPI_LIBS) -ldl

# logfs-bench: the log layer alone, without MPI.
noinst_PROGRAMS += %reldir%/logfs-bench
%canon_reldir%_logfs_bench_SOURCES = %reldir%/logfs-bench.c
%canon_reldir%_logfs_bench_CPPFLAGS = $(LOGFS_CPPFLAGS)
%canon_reldir%_logfs_bench_CFLAGS = $(LOGFS_CFLAGS)
%canon_reldir%_logfs_bench_LDADD = $(LOGFS_LIB) @PMEM_LIBS@

# model-reads: random reads of others' data after a write phase, by model
# (the consistency-models paper's comparison; run it across nodes).
noinst_PROGRAMS += %reldir%/model-reads
%canon_reldir%_model_reads_SOURCES = %reldir%/model-reads.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_model_reads_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_model_reads_LDADD = $(MPI_LIBS)

# sync-hooks: what MPI's synchronization hooks (causal consistency) cost a
# ping-pong and an allreduce: no file open, a file open, writes between.
noinst_PROGRAMS += %reldir%/sync-hooks
%canon_reldir%_sync_hooks_SOURCES = %reldir%/sync-hooks.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_sync_hooks_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_sync_hooks_LDADD = $(MPI_LIBS)

# interleave: small writes and MPI messages interleaved, reads every few
# rounds: causal (the default) against mpiio with its syncs, posix, stock.
noinst_PROGRAMS += %reldir%/interleave
%canon_reldir%_interleave_SOURCES = %reldir%/interleave.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_interleave_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_interleave_LDADD = $(MPI_LIBS)

# ior-pattern: IOR's access patterns (file per process, 8-byte transfers,
# collective), write and read phases, on bbfs: against ufs: (IOR itself is
# not packaged in Debian).
noinst_PROGRAMS += %reldir%/ior-pattern
%canon_reldir%_ior_pattern_SOURCES = %reldir%/ior-pattern.c %reldir%/bench.c %reldir%/bench.h
%canon_reldir%_ior_pattern_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_ior_pattern_LDADD = $(MPI_LIBS)

# open-rounds: rounds of one open-to-close sequence, for tools/pfs-ops.sh
# (what each costs the parallel file system's metadata server).
noinst_PROGRAMS += %reldir%/open-rounds
%canon_reldir%_open_rounds_SOURCES = %reldir%/open-rounds.c
%canon_reldir%_open_rounds_CPPFLAGS = $(MPI_CPPFLAGS)
%canon_reldir%_open_rounds_LDADD = $(MPI_LIBS)
