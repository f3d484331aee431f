# logfs: the log-structured store under the bbfs driver.  Plain C11, no MPI:
# the same sources are also compiled into libmpi by the driver build, hence
# -fPIC and no global mutable state.

LOGFS_CFLAGS = $(AM_CFLAGS) -std=c11 -D_POSIX_C_SOURCE=200809L -fPIC

include %reldir%/sources.mk

noinst_LIBRARIES += %reldir%/liblogfs.a
%canon_reldir%_liblogfs_a_CFLAGS = $(LOGFS_CFLAGS)
%canon_reldir%_liblogfs_a_SOURCES = $(LOGFS_HDRS) $(LOGFS_SRCS)

LOGFS_LIB = %reldir%/liblogfs.a
LOGFS_CPPFLAGS = -I$(srcdir)/%reldir%
