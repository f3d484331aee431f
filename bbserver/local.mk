# bbserver: the per-node ownership and log server, its client library and
# bbsctl.  The core (wire format, ownership map, request handling, tokens,
# saved state) has no UCX, so the unit tests and the fuzzer use it as is;
# the transport (ucx.c, server.c, client.c) is UCX.

BBS_CFLAGS = $(AM_CFLAGS) -std=c11 -D_POSIX_C_SOURCE=200809L -fPIC
BBS_CORE_H = %reldir%/proto.h %reldir%/bigbuf.h %reldir%/ownmap.h %reldir%/serve.h %reldir%/token.h \
	%reldir%/state.h %reldir%/drains.h
BBS_CORE_C = %reldir%/proto.c %reldir%/bigbuf.c %reldir%/ownmap.c %reldir%/serve.c %reldir%/token.c \
	%reldir%/state.c %reldir%/drains.c
BBS_CORE_SRCS = $(BBS_CORE_H) $(BBS_CORE_C)
BBS_NET_SRCS = \
	%reldir%/ucx.h %reldir%/ucx.c %reldir%/ucx_dl.h %reldir%/ucx_dl.c \
	%reldir%/client.h %reldir%/client.c %reldir%/far.h %reldir%/far.c \
	%reldir%/server.h

noinst_LIBRARIES += %reldir%/libbbserver.a
%canon_reldir%_libbbserver_a_CFLAGS = $(BBS_CFLAGS)
%canon_reldir%_libbbserver_a_SOURCES = $(BBS_CORE_SRCS) $(BBS_NET_SRCS)
BBS_LIB = %reldir%/libbbserver.a
BBS_CPPFLAGS = -I$(srcdir)/%reldir%

bin_PROGRAMS += %reldir%/bbserver
%canon_reldir%_bbserver_SOURCES = %reldir%/main.c %reldir%/server.c
%canon_reldir%_bbserver_CFLAGS = $(BBS_CFLAGS)
%canon_reldir%_bbserver_LDADD = $(BBS_LIB) $(LOGFS_LIB) @UCX_LIBS@ @PMEM_LIBS@ -lpthread

bin_PROGRAMS += %reldir%/bbsctl
%canon_reldir%_bbsctl_SOURCES = %reldir%/bbsctl.c %reldir%/bbsctl_drains.c \
	%reldir%/bbsctl_drains.h
%canon_reldir%_bbsctl_CFLAGS = $(BBS_CFLAGS)
%canon_reldir%_bbsctl_LDADD = $(BBS_LIB) $(LOGFS_LIB) @UCX_LIBS@ @PMEM_LIBS@

# Attach and query throughput and latency against a running server
# (docs/bbserver.md, "Performance").
noinst_PROGRAMS += %reldir%/bbs-bench
%canon_reldir%_bbs_bench_SOURCES = %reldir%/bbs-bench.c
%canon_reldir%_bbs_bench_CFLAGS = $(BBS_CFLAGS)
%canon_reldir%_bbs_bench_LDADD = $(BBS_LIB) $(LOGFS_LIB) @UCX_LIBS@ @PMEM_LIBS@

# bbserver across 2 emulated nodes against UCX's own message rate there
# (docs/bbserver.md, "Performance"; root, ucx_perftest).
bench-server: all
	$(srcdir)/%reldir%/bench-nodes.sh $(abs_top_builddir)
.PHONY: bench-server
EXTRA_DIST += %reldir%/bench-nodes.sh
