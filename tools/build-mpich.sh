#!/usr/bin/env bash
# build-mpich.sh — build MPICH 4.0.2 with the bbfs ROMIO driver, cached.
#
# usage: tools/build-mpich.sh BUILDDIR [MPICH_SOURCE]
#
# MPICH_SOURCE is a directory or tarball; empty means Debian's source package
# (apt-get source).  The expensive part (patched source, configure, full build)
# lives in $BBFS_CACHE_DIR/mpich-<key>, where <key> hashes everything that
# goes into it except the driver sources: the MPICH source, the ROMIO patch,
# the configure flags, the recipe version below and the compiler.  The driver is linked
# into that tree (src/mpi/romio/bbfs -> this checkout), so a driver change is
# an incremental `make`, and the result is published as BUILDDIR/mpich.
set -euo pipefail

BUILDDIR=$(cd "${1:?usage: build-mpich.sh BUILDDIR [MPICH_SOURCE]}" && pwd)
SOURCE=${2:-}
TOPDIR=$(cd "$(dirname "$0")/.." && pwd)
. "$TOPDIR/tools/build-common.sh"
MPICH_VERSION=4.0.2
# Applied in name order: registering the driver, then ROMIO hooks it uses.
PATCHES=("$TOPDIR"/adio/mpich-patches/*.patch)
# BBFS_MPICH_DEVICE=ch4:ucx builds the device Debian's own MPICH 4.0.2 has
# (ch4 over UCX, hydra, Slurm), published as BUILDDIR/mpich-ucx (make
# check-ucx, issue 33); the default stays ch3:nemesis (docs/build.md).
DEVICE=${BBFS_MPICH_DEVICE:-ch3:nemesis}
case $DEVICE in
    ch3:nemesis) DEVICE_FLAGS=(--with-device=ch3:nemesis) PUBLISH=mpich ;;
    ch4:ucx) DEVICE_FLAGS=(--with-device=ch4:ucx --with-ucx=/usr --with-slurm=/usr --with-pm=hydra)
             PUBLISH=mpich-ucx
             # fixes of MPICH's ch4:ucx code alone (the default build's key stays)
             PATCHES+=("$TOPDIR"/adio/mpich-patches/ch4-ucx/*.patch) ;;
    *) echo "build-mpich: BBFS_MPICH_DEVICE=$DEVICE: say ch3:nemesis or ch4:ucx" >&2; exit 2 ;;
esac
CONFIG_FLAGS=("${DEVICE_FLAGS[@]}" --with-datatype-engine=dataloop
              --with-hwloc=/usr --disable-fortran --disable-cxx
              --enable-romio --with-file-system=ufs+nfs+testfs+bbfs
              --disable-doc --enable-shared --disable-static
              --enable-yield=sched_yield)
# BBFS_MPICH_SANITIZE=1 makes the driver's MPICH under AddressSanitizer and
# UBSan, published as BUILDDIR/mpich-sanitize (make check-sanitize-mpi):
# a copy of this MPICH's build (its own cache key) in which ROMIO, the
# driver inside it, is compiled again instrumented and libmpi linked again.
# The rest of MPICH stays as built: instrumenting all of it tripled a cold
# build (21 minutes on 2 cores against 8) and watched code bbfs does not own.
BUILD_CFLAGS="-O2 -g"
SANITIZE_CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined"
# --enable-yield: MPICH's configure picks "nothing" on Linux, so a rank
# waiting in a collective spins through its whole time slice.  With more
# ranks than cores (4 on the 2-core CI machine) every barrier then costs
# 4-8 ms; sched_yield brings it back to microseconds (docs/build.md).

LOG_TAG=build-mpich
T0=$(now)

# --- 1. locate the source and hash it ---------------------------------------
[ -n "$SOURCE" ] || SOURCE=$(source_tarball mpich "$MPICH_VERSION")
src_hash=$(source_hash "$SOURCE" src/mpi/romio/configure.ac)

# Bump when the steps below change what gets built (not how it is copied).
RECIPE=2     # 2: the C bindings generated again after patching
key=$( { echo "$src_hash"; cat "${PATCHES[@]}"; echo "${CONFIG_FLAGS[*]}"; echo "recipe $RECIPE";
         ${CC:-gcc} --version | head -1; } | sha256sum | cut -c1-16)
cache_tree "mpich-$MPICH_VERSION-$key"

# --- 2. unpack, patch, regenerate ROMIO's build system ----------------------
if [ ! -f "$ROOT/.patched" ]; then
    fresh_source "$SOURCE"
    for p in "${PATCHES[@]}"; do patch -d "$SRC" -p1 --quiet < "$p"; done
    # The C bindings are generated (and shipped so); mpich-sync-hooks.patch
    # changes their generator, so generate them again (a second).
    # Files it writes again unchanged keep their times, so that make does
    # not think the build system (src/binding/c/Makefile.mk) changed.
    kept="$ROOT/gen-kept"; rm -rf "$kept"; mkdir -p "$kept"
    gen_other=(src/binding/c/Makefile.mk src/binding/c/errnames.txt src/include/mpir_impl.h
               src/mpi_t/qmpi_register.h src/include/mpi_proto.h test/mpi/include/mtest_mpix.h)
    ( cd "$SRC" && cp -p --parents "${gen_other[@]}" "$kept"/ )
    ( cd "$SRC" && python3 maint/gen_binding_c.py >"$ROOT/gen_binding_c.log" 2>&1 ) \
        || { log "generating MPICH's C bindings failed, see $ROOT/gen_binding_c.log"; exit 1; }
    for f in "${gen_other[@]}"; do
        cmp -s "$kept/$f" "$SRC/$f" && touch -r "$kept/$f" "$SRC/$f"
    done
    rm -rf "$kept"
    relink "$TOPDIR" "$SRC/src/mpi/romio/bbfs"
    # Only ROMIO's configure.ac changed; regenerate just that subproject.
    ( cd "$SRC/src/mpi/romio" && autoreconf -fi >/dev/null 2>"$ROOT/autoreconf.log" ) \
        || { log "autoreconf of ROMIO failed, see $ROOT/autoreconf.log"; exit 1; }
    touch "$ROOT/.patched"
fi
# Point the tree at this checkout (a fresh clone elsewhere reuses the cache).
follow_checkout "$ROOT" "$BLD/src/mpi/romio/bbfs"
relink "$TOPDIR" "$SRC/src/mpi/romio/bbfs"

# --- 3. configure and build --------------------------------------------------
configure_once "MPICH (about a minute)"
touch "$ROOT/.configured"
build_and_install MPICH src/mpi/romio/bbfs "lib/.libs/libmpi.so.12.*.*"
# Debian's MPICH-linked programs (libhdf5-mpich, ...) ask for libmpich.so.12.
relink libmpi.so.12 "$PREFIX/lib/libmpich.so.12"
touch "$ROOT/.built"

[ "$DEVICE" = ch3:nemesis ] || link_bbserver     # (the main build's make links its own)
relink "$PREFIX" "$BUILDDIR/$PUBLISH"
log "MPICH ($DEVICE) with bbfs ready: $BUILDDIR/$PUBLISH -> $PREFIX ($(elapsed_since "$T0") s)"
[ "${BBFS_MPICH_SANITIZE:-0}" = 1 ] && [ "$DEVICE" = ch3:nemesis ] || exit 0

# --- 4. the sanitizer copy ----------------------------------------------------
# Its tree holds a copy of the build above and of its install.  The copy's
# makefiles still name the first tree's source and headers, which it only
# reads; nothing is installed from it: libmpi goes into the copied prefix.
T0=$(now)
REG_BLD=$BLD REG_PREFIX=$PREFIX
SAN_RECIPE=1
sankey=$( { echo "$key"; echo "$SANITIZE_CFLAGS"; echo "sanitize recipe $SAN_RECIPE"; } | sha256sum | cut -c1-16)
ROOT="$CACHE/mpich-$MPICH_VERSION-$sankey-sanitize"
BLD="$ROOT/build"; PREFIX="$ROOT/prefix"
mkdir -p "$ROOT"
exec 8>"$ROOT/.lock"
flock 8
ROMIO="$BLD/src/mpi/romio"
if [ ! -f "$ROOT/.copied" ]; then
    log "sanitizer MPICH: copying $REG_BLD (ROMIO is then compiled again, about 2 minutes)"
    rm -rf "$BLD" "$PREFIX" "$ROOT/.checkout"
    cp -a "$REG_BLD" "$BLD"; cp -a "$REG_PREFIX" "$PREFIX"
    # Every ROMIO object goes, so that make compiles it instrumented.
    find "$ROMIO" \( -name '*.o' -o -name '*.lo' -o -name '*.la' \) -delete
    rm -f "$BLD"/lib/libmpi.la "$BLD"/lib/.libs/libmpi.*
    touch "$ROOT/.copied"
fi
follow_checkout "$ROOT" "$ROMIO/bbfs"
romio_cflags="$(sed -n 's/^CFLAGS = //p' "$ROMIO/Makefile") $SANITIZE_CFLAGS"
top_ldflags="$(sed -n 's/^LDFLAGS = //p' "$BLD/Makefile") -fsanitize=address,undefined"
log "building the sanitizer MPICH's ROMIO in $ROMIO"
# MPICH frees little at exit, and its build runs programs it links.
{ ASAN_OPTIONS=detect_leaks=0 make -C "$ROMIO" -j"$JOBS" CFLAGS="$romio_cflags" &&
  ASAN_OPTIONS=detect_leaks=0 make -C "$BLD" -j"$JOBS" LDFLAGS="$top_ldflags" lib/libmpi.la; } \
    >"$ROOT/make.log" 2>&1 || build_failed "sanitizer MPICH"
check_driver_warnings "$ROOT/make.log" src/mpi/romio/bbfs/ "$ROMIO/bbfs"
install_if_changed "$(ls "$BLD"/lib/.libs/libmpi.so.12.*.* | head -1)"
link_bbserver
relink "$PREFIX" "$BUILDDIR/mpich-sanitize"
log "sanitizer MPICH ready: $BUILDDIR/mpich-sanitize -> $PREFIX ($(elapsed_since "$T0") s)"
