# The logfs sources: the one list that every build of them uses.  Included
# by logfs/local.mk (the library, its sanitizer and fuzz builds; %reldir%
# is logfs) and by the driver's ROMIO fragment adio/ad_bbfs/Makefile.mk
# (inside libmpi; %reldir% is bbfs/logfs).
LOGFS_HDRS = \
	%reldir%/logfs.h %reldir%/format.h %reldir%/coding.h %reldir%/internal.h \
	%reldir%/errors.h %reldir%/crc32c.h %reldir%/extents.h %reldir%/rangemap.h \
	%reldir%/index.h %reldir%/datalog.h %reldir%/writer.h %reldir%/reader.h \
	%reldir%/seal.h %reldir%/planner.h %reldir%/plan_internal.h %reldir%/manifest.h \
	%reldir%/sessions.h %reldir%/fault.h %reldir%/frame.h %reldir%/writer_internal.h \
	%reldir%/summary.h %reldir%/drain.h %reldir%/readmap.h
LOGFS_SRCS = \
	%reldir%/errors.c \
	%reldir%/fsutil.c \
	%reldir%/crc32c.c \
	%reldir%/frame.c \
	%reldir%/extents.c \
	%reldir%/rangemap.c \
	%reldir%/rangemap_strided.c \
	%reldir%/index.c \
	%reldir%/datalog.c \
	%reldir%/writer.c \
	%reldir%/writer_steps.c \
	%reldir%/writer_files.c \
	%reldir%/summary.c \
	%reldir%/reader.c \
	%reldir%/seal.c \
	%reldir%/datalog_reader.c \
	%reldir%/readmap.c \
	%reldir%/export.c \
	%reldir%/planner.c \
	%reldir%/plan_map.c \
	%reldir%/plan_compact.c \
	%reldir%/plan_sessions.c \
	%reldir%/plan_domain.c \
	%reldir%/drain.c \
	%reldir%/drain_file.c \
	%reldir%/manifest.c \
	%reldir%/sessions.c \
	%reldir%/fault.c
