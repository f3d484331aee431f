# Fuzzing with libFuzzer (needs clang), bounded in time: the metalog
# reader, the manifest parser and the driver's hint value parsers.  Each
# target is its harness plus the logfs sources ($(LOGFS_SRCS), the one
# list), all built with libFuzzer, ASan and UBSan.
FUZZ_BUILD = test -n "$(CLANG)" || { echo "fuzz-logfs needs clang (Debian: clang libclang-rt-14-dev)"; exit 1; }; \
	mkdir -p %reldir% && $(CLANG) -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L \
	  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -o $@ $^
LOGFS_FUZZ_TIME = 60
EXTRA_DIST += %reldir%/fuzz_reader.c
check_PROGRAMS += %reldir%/make-seeds
%canon_reldir%_make_seeds_SOURCES = %reldir%/make-seeds.c
%canon_reldir%_make_seeds_CPPFLAGS = $(LOGFS_CPPFLAGS)
%canon_reldir%_make_seeds_CFLAGS = $(LOGFS_CFLAGS)
%canon_reldir%_make_seeds_LDADD = $(LOGFS_LIB) @PMEM_LIBS@

%reldir%/fuzz-reader: %reldir%/fuzz_reader.c $(LOGFS_SRCS)
	$(FUZZ_BUILD) $(LOGFS_CPPFLAGS) @PMEM_LIBS@
CLEANFILES += %reldir%/fuzz-reader

# The manifest parser, fuzzed the same way (manifests are text anyone who
# can write the file's directory can leave there); %reldir%/regress keeps
# the inputs that found bugs.
LOGFS_FUZZ_MANIFEST_TIME = 30
EXTRA_DIST += %reldir%/fuzz_manifest.c

%reldir%/fuzz-manifest: %reldir%/fuzz_manifest.c $(LOGFS_SRCS)
	$(FUZZ_BUILD) $(LOGFS_CPPFLAGS) @PMEM_LIBS@
CLEANFILES += %reldir%/fuzz-manifest

# The hint value parsers of the driver (MPI-free, so fuzzed on their own).
LOGFS_FUZZ_HINTS_SRCS = %reldir%/fuzz_hints.c adio/ad_bbfs/ad_bbfs_hint_table.c
LOGFS_FUZZ_HINTS_TIME = 20
EXTRA_DIST += %reldir%/fuzz_hints.c

%reldir%/fuzz-hints: $(LOGFS_FUZZ_HINTS_SRCS)
	$(FUZZ_BUILD) -I$(srcdir)/adio/ad_bbfs
CLEANFILES += %reldir%/fuzz-hints

# bbserver's request path (every byte a server takes from the network),
# from seeds make-bbs-seeds writes.
BBS_FUZZ_TIME = 30
EXTRA_DIST += %reldir%/fuzz_bbserver.c %reldir%/regress-bbserver
check_PROGRAMS += %reldir%/make-bbs-seeds
%canon_reldir%_make_bbs_seeds_SOURCES = %reldir%/make_bbs_seeds.c
%canon_reldir%_make_bbs_seeds_CPPFLAGS = $(BBS_CPPFLAGS)
%canon_reldir%_make_bbs_seeds_CFLAGS = $(BBS_CFLAGS)
%canon_reldir%_make_bbs_seeds_LDADD = $(BBS_LIB) $(LOGFS_LIB)

# Fewer pieces per attach than real servers take, so that no input's
# (legitimate) work runs into the fuzzer's time limit.
%reldir%/fuzz-bbserver: %reldir%/fuzz_bbserver.c $(BBS_CORE_C) $(LOGFS_SRCS)
	$(FUZZ_BUILD) $(BBS_CPPFLAGS) '-DBBS_MAX_PIECES=(1ull << 16)' @PMEM_LIBS@
CLEANFILES += %reldir%/fuzz-bbserver

.PHONY: fuzz-logfs
# Runs for LOGFS_FUZZ_TIME seconds from seeds that real writers produce, then
# the manifest parser for LOGFS_FUZZ_MANIFEST_TIME from hand-written seeds,
# then the hint value parsers for LOGFS_FUZZ_HINTS_TIME.
fuzz-logfs: %reldir%/fuzz-reader %reldir%/make-seeds %reldir%/fuzz-manifest %reldir%/fuzz-hints \
	    %reldir%/fuzz-bbserver %reldir%/make-bbs-seeds
	rm -rf %reldir%/corpus && mkdir -p %reldir%/corpus
	./%reldir%/make-seeds %reldir%/corpus
	./%reldir%/fuzz-reader -max_total_time=$(LOGFS_FUZZ_TIME) -max_len=65536 \
	  -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 %reldir%/corpus
	rm -rf %reldir%/mcorpus && mkdir -p %reldir%/mcorpus
	printf 'bbfs-manifest 2\nfile_id 00000000000000ff\nwriters 2\nwriter 0 node1 3 /ssd/a.0.metalog\nwriter 1 node2 0 /ssd/a.1.metalog\n' > %reldir%/mcorpus/v2
	printf 'bbfs-manifest 1\nfile_id 0000000000000001\nwriters 1\nwriter 0 host /tmp/x.metalog\n' > %reldir%/mcorpus/v1
	printf 'bbfs-manifest 3\nfile_id 00000000000000ff\nwriters 1\nwriter 0 node1 3 /ssd/a.0.metalog\nreplayed\n' > %reldir%/mcorpus/v3
	./%reldir%/fuzz-manifest -max_total_time=$(LOGFS_FUZZ_MANIFEST_TIME) -max_len=4096 \
	  -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 %reldir%/mcorpus \
	  $(srcdir)/%reldir%/regress
	rm -rf %reldir%/hcorpus && mkdir -p %reldir%/hcorpus
	for v in 4194304 64k 1G 9223372036854775807 8589934591g /ssd/bb /ssd/../etc posix on_close \
	    bbfs_replay=never bbfs_log_quota=1g bbfs_logdir=/ssd/bb bbfs_server=auto bbfs_durable=true; do \
	  printf '%s' "$$v" > "%reldir%/hcorpus/$$(printf '%s' "$$v" | tr -c 'a-zA-Z0-9' _)"; done
	./%reldir%/fuzz-hints -max_total_time=$(LOGFS_FUZZ_HINTS_TIME) -max_len=300 \
	  -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 %reldir%/hcorpus
	rm -rf %reldir%/bcorpus && mkdir -p %reldir%/bcorpus
	./%reldir%/make-bbs-seeds %reldir%/bcorpus
	./%reldir%/fuzz-bbserver -max_total_time=$(BBS_FUZZ_TIME) -max_len=8192 \
	  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 %reldir%/bcorpus \
	  $(srcdir)/%reldir%/regress-bbserver
