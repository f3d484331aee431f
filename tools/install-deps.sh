#!/usr/bin/env bash
# Installs the Debian packages bbfs needs to build and test, and enables
# deb-src so that the source packages of MPICH (and, for make check-clients,
# PnetCDF and HDF5) can be fetched.  Idempotent.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

# Debian 12 ships deb822 sources; add a matching deb-src entry once.
if ! grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ /etc/apt/sources.list 2>/dev/null \
   && ! grep -qs '^deb-src' /etc/apt/sources.list 2>/dev/null; then
    $SUDO tee /etc/apt/sources.list.d/bbfs-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi

PKGS=(
    build-essential autoconf automake libtool pkg-config dpkg-dev patch
    libhwloc-dev            # MPICH --with-hwloc=/usr
    libucx-dev              # bbserver transport
    ucx-utils               # ucx_perftest: the transport's own rate (make bench-server)
    libpmem-dev             # persistent-memory datalog path
    googletest libgtest-dev # unit tests
    clang libclang-rt-14-dev  # libFuzzer targets (metalog reader, manifest, hints)
    valgrind                # make check-valgrind
    strace                  # durable-flush.sh: the order of fsyncs and log removals
    gdb                     # a test that times out prints its processes' stacks
    python3 python3-venv python3-dev  # mpi4py (make check-clients): a venv of Debian's python, its headers
    python3-matplotlib      # noncontig/plot.py: the benchmark CSV as PNG plots
    libhdf5-mpich-dev hdf5-tools  # Debian's parallel HDF5, run unmodified on bbfs (make check)
    m4                      # PnetCDF (make check-clients): its autoreconf and generated sources
    zlib1g-dev              # HDF5 (make check-clients): deflate filter in testpar's filter tests
    util-linux iproute2     # the emulated cluster (tests/cluster): unshare, nsenter, ip
    slurm-wlm munge         # a real Slurm on the emulated cluster (tests/cluster/slurm.sh)
    libslurm-dev            # make check-ucx: the ch4:ucx MPICH is built with Slurm, as Debian builds its own
)

missing=()
for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
need_update=0
[ ${#missing[@]} -gt 0 ] && need_update=1
# apt-get source needs the source index even when every binary package is present.
ls /var/lib/apt/lists/*Sources* >/dev/null 2>&1 || need_update=1
if [ $need_update -eq 1 ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
fi
if [ ${#missing[@]} -gt 0 ]; then
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
