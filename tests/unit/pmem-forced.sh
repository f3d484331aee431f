#!/bin/sh
# The unit tests again, with libpmem treating every mapping as persistent
# memory, so the pmem datalog path runs on any file system.
PMEM_IS_PMEM_FORCE=1 exec ./tests/unit/logfs-unit "$@"
