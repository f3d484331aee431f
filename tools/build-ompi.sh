#!/usr/bin/env bash
# build-ompi.sh — build Open MPI 5.0.7 with the bbfs driver in its ROMIO
# (the io/romio341 component), cached.
#
# usage: tools/build-ompi.sh BUILDDIR [OPEN_MPI_SOURCE]
#
# OPEN_MPI_SOURCE is a directory or tarball; empty means Debian's source
# package of trixie (bookworm has Open MPI 4.1), fetched with apt-get source
# through an apt state of its own under the cache, so that this machine's
# apt sources and packages stay as they are.  As in build-mpich.sh, the
# expensive part lives in $BBFS_CACHE_DIR/openmpi-<key>, keyed by everything
# that goes into it but the driver's sources, which are linked into the tree
# (3rd-party/romio341/bbfs -> this checkout); the result is published as
# BUILDDIR/ompi.
#
# What goes in (docs/build.md, "Open MPI"):
#   - adio/mpich-patches/romio-*.patch, the same files MPICH's ROMIO takes
#     (-p4 strips MPICH's src/mpi/romio/);
#   - adio/ompi-patches/*.patch and ompi-sync-hooks.py: the storage
#     synchronization hooks in Open MPI's C bindings (mpich-sync-hooks.patch's
#     counterpart).
set -euo pipefail

BUILDDIR=$(cd "${1:?usage: build-ompi.sh BUILDDIR [OPEN_MPI_SOURCE]}" && pwd)
SOURCE=${2:-}
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
. "$TOPDIR/tools/build-common.sh"
OMPI_VERSION=5.0.7
OMPI_SUITE=trixie
ROMIO_PATCHES=("$TOPDIR"/adio/mpich-patches/romio-*.patch)
OMPI_PATCHES=("$TOPDIR"/adio/ompi-patches/*.patch)
HOOKS_SCRIPT="$TOPDIR/adio/ompi-patches/ompi-sync-hooks.py"
# Debian's own Open MPI build is the model: shared libraries, no Fortran
# here (the tests are C), the bundled PMIx and PRRTE (bookworm's PMIx is
# older than 5.0 wants), the system's hwloc.  ROMIO gets bbfs in its list.
CONFIG_FLAGS=(--disable-mpi-fortran --disable-oshmem --with-hwloc=external
              --with-libevent=internal --with-pmix=internal --with-prrte=internal
              --disable-sphinx --enable-shared --disable-static
              --with-io-romio-flags=--with-file-system=ufs+nfs+testfs+bbfs)
BUILD_CFLAGS="-O2 -g"
LOG_TAG=build-ompi
T0=$(now)

# --- 1. locate the source and hash it ---------------------------------------
if [ -z "$SOURCE" ]; then
    SOURCE="$CACHE/downloads/openmpi_${OMPI_VERSION}.orig.tar.xz"
    if [ ! -s "$SOURCE" ]; then
        log "fetching Open MPI $OMPI_VERSION from Debian's $OMPI_SUITE source package"
        apt_source_download openmpi "$OMPI_VERSION" "$OMPI_SUITE" "$SOURCE"
    fi
fi
src_hash=$(source_hash "$SOURCE" ompi/mca/io/romio341/Makefile.am)

# Bump when the steps below change what gets built (not how it is copied).
RECIPE=1
key=$( { echo "$src_hash"; cat "${ROMIO_PATCHES[@]}" "${OMPI_PATCHES[@]}" "$HOOKS_SCRIPT";
         echo "${CONFIG_FLAGS[*]} $BUILD_CFLAGS"; echo "recipe $RECIPE";
         ${CC:-gcc} --version | head -1; } | sha256sum | cut -c1-16)
ROOT="$CACHE/openmpi-$OMPI_VERSION-$key"
SRC="$ROOT/src"; BLD="$ROOT/build"; PREFIX="$ROOT/prefix"
ROMIO_SRC="$SRC/3rd-party/romio341"
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock 9   # one build of a given tree at a time

# --- 2. unpack, patch, regenerate ROMIO's build system ----------------------
if [ ! -f "$ROOT/.patched" ]; then
    log "cold build: preparing source in $SRC"
    rm -rf "$SRC" "$BLD" "$PREFIX" "$ROOT"/.configured "$ROOT"/.built
    unpack_source "$SOURCE" "$SRC"
    for p in "${ROMIO_PATCHES[@]}"; do patch -d "$ROMIO_SRC" -p4 --quiet < "$p"; done
    for p in "${OMPI_PATCHES[@]}"; do patch -d "$SRC" -p1 --quiet < "$p"; done
    python3 "$HOOKS_SCRIPT" "$SRC" >"$ROOT/sync-hooks.log" 2>&1 \
        || { cat "$ROOT/sync-hooks.log" >&2; log "hooking Open MPI's C bindings failed"; exit 1; }
    ln -sfn "$TOPDIR" "$ROMIO_SRC/bbfs"
    # Only ROMIO's configure.ac and Makefile.mk changed; regenerate just ROMIO.
    ( cd "$ROMIO_SRC" && autoreconf -fi >/dev/null 2>"$ROOT/autoreconf.log" ) \
        || { log "autoreconf of ROMIO failed, see $ROOT/autoreconf.log"; exit 1; }
    touch "$ROOT/.patched"
fi
follow_checkout "$ROOT" "$BLD/3rd-party/romio341/bbfs"
ln -sfn "$TOPDIR" "$ROMIO_SRC/bbfs"

# --- 3. configure and build --------------------------------------------------
if [ ! -f "$ROOT/.configured" ]; then
    log "configuring Open MPI (about two minutes)"
    mkdir -p "$BLD"
    ( cd "$BLD" && "$SRC/configure" --prefix="$PREFIX" "${CONFIG_FLAGS[@]}" \
        CFLAGS="$BUILD_CFLAGS" >"$ROOT/configure.log" 2>&1 ) \
        || { log "Open MPI configure failed, see $ROOT/configure.log"; tail -20 "$ROOT/configure.log" >&2; exit 1; }
    grep -q 'ROMIO_BBFS 1' "$BLD/3rd-party/romio341/adio/include/romioconf.h" \
        || { log "ROMIO was configured without bbfs (see $ROOT/configure.log)"; exit 1; }
    touch "$ROOT/.configured"
fi
log "building Open MPI in $BLD"
if ! make -C "$BLD" -j"$JOBS" >"$ROOT/make.log" 2>&1; then
    grep -E 'error|Error' "$ROOT/make.log" | head -30 >&2
    log "Open MPI build failed, see $ROOT/make.log"; exit 1
fi
check_driver_warnings "$ROOT/make.log" "romio341/bbfs/" "$BLD/3rd-party/romio341/bbfs"
# ROMIO, and so the driver, is inside libmpi (a static component): after the
# first full install, a driver change copies just that library.
built_lib=$(ls "$BLD"/ompi/.libs/libmpi.so.40.*.* 2>/dev/null | head -1)
if [ -f "$ROOT/.built" ] && [ -n "$built_lib" ] && [ -f "$PREFIX/lib/$(basename "$built_lib")" ]; then
    cmp -s "$built_lib" "$PREFIX/lib/$(basename "$built_lib")" \
        || install -m 0755 "$built_lib" "$PREFIX/lib/"
else
    make -C "$BLD" install >"$ROOT/install.log" 2>&1 \
        || { tail -20 "$ROOT/install.log" >&2; log "Open MPI install failed, see $ROOT/install.log"; exit 1; }
fi
# The driver starts this node's bbserver beside the libmpi it is in.
ln -sfn "$BUILDDIR/bbserver/bbserver" "$PREFIX/bin/bbserver"
touch "$ROOT/.built"

ln -sfn "$PREFIX" "$BUILDDIR/ompi"
log "Open MPI with bbfs ready: $BUILDDIR/ompi -> $PREFIX ($(elapsed_since "$T0") s)"
