##
## ROMIO build fragment for the bbfs driver.  ROMIO's adio/Makefile.mk
## includes this file (see adio/mpich-patches/); paths are relative to ROMIO's
## top directory, where tools/build-mpich.sh links this project as ./bbfs.
## The logfs sources come from their one list, logfs/sources.mk.
##

include $(top_srcdir)/bbfs/logfs/sources.mk

if BUILD_AD_BBFS

# MPICH's own headers, searched last (none shadows ROMIO's): the driver
# includes mpir_sync_hooks.h, which adio/mpich-patches/ adds to MPICH (in
# Open MPI, ad_bbfs_mpi_compat.h declares the hooks itself).
AM_CPPFLAGS += -idirafter $(top_srcdir)/../../include

noinst_HEADERS += bbfs/adio/ad_bbfs/ad_bbfs.h bbfs/adio/ad_bbfs/ad_bbfs_hint_table.h \
    bbfs/adio/ad_bbfs/ad_bbfs_server.h bbfs/adio/ad_bbfs/ad_bbfs_mpi_compat.h \
    bbfs/adio/ad_bbfs/ad_bbfs_exchange.h

romio_other_sources +=                          \
    bbfs/adio/ad_bbfs/ad_bbfs.c                 \
    bbfs/adio/ad_bbfs/ad_bbfs_common.c          \
    bbfs/adio/ad_bbfs/ad_bbfs_lower.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_mpi_compat.c      \
    bbfs/adio/ad_bbfs/ad_bbfs_hints.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_hint_table.c     \
    bbfs/adio/ad_bbfs/ad_bbfs_open.c            \
    bbfs/adio/ad_bbfs/ad_bbfs_times.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_close.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_io.c              \
    bbfs/adio/ad_bbfs/ad_bbfs_fcntl.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_delete.c          \
    bbfs/adio/ad_bbfs/ad_bbfs_features.c       \
    bbfs/adio/ad_bbfs/ad_bbfs_view.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_pending.c        \
    bbfs/adio/ad_bbfs/ad_bbfs_pending_remove.c \
    bbfs/adio/ad_bbfs/ad_bbfs_pending_find.c   \
    bbfs/adio/ad_bbfs/ad_bbfs_manifest.c       \
    bbfs/adio/ad_bbfs/ad_bbfs_log.c            \
    bbfs/adio/ad_bbfs/ad_bbfs_order.c          \
    bbfs/adio/ad_bbfs/ad_bbfs_sync.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_private.c        \
    bbfs/adio/ad_bbfs/ad_bbfs_write.c          \
    bbfs/adio/ad_bbfs/ad_bbfs_read.c           \
    bbfs/adio/ad_bbfs/ad_bbfs_replay.c         \
    bbfs/adio/ad_bbfs/ad_bbfs_exchange.c       \
    bbfs/adio/ad_bbfs/ad_bbfs_exchange_round.c \
    bbfs/adio/ad_bbfs/ad_bbfs_datalogs.c       \
    bbfs/adio/ad_bbfs/ad_bbfs_server.c         \
    bbfs/adio/ad_bbfs/ad_bbfs_server_attach.c  \
    bbfs/adio/ad_bbfs/ad_bbfs_server_read.c    \
    bbfs/adio/ad_bbfs/ad_bbfs_server_start.c   \
    bbfs/adio/ad_bbfs/ad_bbfs_nodes.c          \
    bbfs/adio/ad_bbfs/ad_bbfs_drain.c          \
    bbfs/adio/ad_bbfs/ad_bbfs_bbs_client.c     \
    bbfs/bbserver/proto.c                      \
    bbfs/bbserver/bigbuf.c                     \
    bbfs/bbserver/token.c                      \
    bbfs/bbserver/ucx_dl.c

noinst_HEADERS += $(LOGFS_HDRS) bbfs/bbserver/proto.h bbfs/bbserver/bigbuf.h bbfs/bbserver/token.h \
    bbfs/bbserver/client.h bbfs/bbserver/drains.h bbfs/bbserver/ucx.h bbfs/bbserver/ucx_dl.h bbfs/bbserver/server.h
romio_other_sources += $(LOGFS_SRCS)

endif BUILD_AD_BBFS
