#!/usr/bin/env bash
# build-clients.sh — build PnetCDF and HDF5 (C only, parallel) with their test
# programs, and mpi4py with its test suite, against an MPICH prefix, cached.
#
# usage: tools/build-clients.sh MPI_PREFIX OUTDIR [pnetcdf] [hdf5] [mpi4py]
#
# The sources are Debian's orig tarballs (apt-get source), none of Debian's
# patches applied.  Each library is configured, built and its test programs
# compiled in $BBFS_CACHE_DIR/<lib>-<version>-<key> (default ~/.cache/bbfs),
# where <key> hashes the tarball, the configure flags, the recipe version
# below, the compiler version and the MPICH prefix (its resolved path: the
# cache directory of tools/build-mpich.sh, whose name carries MPICH's key).  A tree that was built is only verified:
# its manifest of test programs must still be there, unchanged.  The trees are
# published as OUTDIR/pnetcdf, OUTDIR/hdf5 and OUTDIR/mpi4py (symlinks), for
# clients/run-clients.sh.  mpi4py is not in Debian 12 in a version that uses
# MPI-4's large-count calls, so it comes from PyPI (build_mpi4py below).
#
# The libraries are static, so their test programs are ordinary executables
# (no libtool wrappers) linked dynamically against MPICH's libmpi: a rebuilt
# driver in the MPICH prefix is picked up without rebuilding anything here.
set -euo pipefail

usage="usage: build-clients.sh MPI_PREFIX OUTDIR [pnetcdf] [hdf5] [mpi4py]"
# The resolved prefix: the trees' Makefiles name its compiler, which must not
# depend on the checkout that asked for the build.
MPICH_ARG=${1:?$usage}
MPI_PREFIX=$(readlink -f "$MPICH_ARG")
OUTDIR=${2:?$usage}
shift 2
LIBS=("$@"); [ ${#LIBS[@]} -gt 0 ] || LIBS=(pnetcdf hdf5 mpi4py)
. "$(dirname "$0")/build-common.sh"     # (CACHE, JOBS, log, source_tarball)
LOG_TAG=build-clients
MPICC="$MPI_PREFIX/bin/mpicc"

[ -x "$MPICC" ] || { log "$MPICH_ARG/bin/mpicc not found: build MPICH first (make)"; exit 1; }
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

# MPICH's identity: tools/build-mpich.sh installs into
# $CACHE/mpich-<version>-<key>/prefix, so the resolved path names its key.
# The key hashes that path (and the compiler's version), not MPICH's files:
# programs link libmpi dynamically, so a driver rebuilt into the same prefix
# needs nothing rebuilt here.
MPICH_ID=$MPI_PREFIX
CC_VERSION=$("$MPICC" --version | head -1)

# manifest DIR: every executable under DIR/build's test directories, with
# size and modification time, one per line (what a warm run verifies).
manifest() {
    local root=$1; shift
    ( cd "$root/build" && find "$@" -type f -perm -u+x ! -name '*.sh' ! -name '*.la' ! -name '*.lo' \
          ! -path '*/.libs/*' -printf '%p %s %T@\n' | LC_ALL=C sort )
}

# open_tree NAME VERSION KEY MANIFEST_FN: root=$CACHE/NAME-VERSION-KEY, locked
# on fd 8 for this build (one build of a tree at a time, and no test run
# meanwhile).  Returns 0 when a tree built there still has the manifest
# MANIFEST_FN prints (it is then published), else 1: build it, then
# publish_tree.
open_tree() {
    local name=$1 version=$2 key=$3 manifest_fn=$4
    root="$CACHE/$name-$version-$key"
    mkdir -p "$root"
    exec 8>"$root/.lock"
    flock 8
    if [ -f "$root/.built" ]; then
        if "$manifest_fn" | cmp -s - "$root/.built"; then
            relink "$root" "$OUTDIR/$name"
            return 0
        fi
        log "$name: $root changed since it was built (test programs missing or modified): rebuilding"
        rm -f "$root/.built"
    fi
    return 1
}

# publish_tree NAME MANIFEST_FN: record the built tree's manifest and
# publish it as OUTDIR/NAME (the caller lets the lock go).
publish_tree() {
    local name=$1 manifest_fn=$2
    "$manifest_fn" > "$root/.built.tmp"
    [ -s "$root/.built.tmp" ] || { log "$name: nothing built to verify later"; exit 1; }
    mv "$root/.built.tmp" "$root/.built"
    relink "$root" "$OUTDIR/$name"
}

# build_lib NAME VERSION TARBALL RECIPE BOOTSTRAP CONFIG_FLAGS TEST_TARGET...
# where CONFIG_FLAGS is the name of an array and TEST_TARGET the commands
# (run in build/) that compile the test programs.
build_lib() {
    local name=$1 version=$2 tarball=$3 recipe=$4 bootstrap=$5 flags_var=$6 tests_fn=$7 testdirs_var=$8
    local -n flags=$flags_var testdirs=$testdirs_var
    local t0 key root
    t0=$(now)
    key=$( { sha256sum < "$tarball" | cut -c1-64; echo "${flags[*]}"; echo "bootstrap $bootstrap";
             echo "recipe $recipe"; echo "$CC_VERSION"; echo "$MPICH_ID"; } | sha256sum | cut -c1-16)
    # (sees root and testdirs: bash scopes dynamically)
    lib_manifest() { manifest "$root" "${testdirs[@]}"; }
    if open_tree "$name" "$version" "$key" lib_manifest; then
        log "$name $version ready: $OUTDIR/$name -> $root ($(wc -l < "$root/.built") test programs verified, $(elapsed_since "$t0") s)"
        exec 8>&-
        return 0
    fi

    log "cold build of $name $version in $root"
    rm -rf "$root/src" "$root/build"
    mkdir -p "$root/src" "$root/build"
    tar -xf "$tarball" -C "$root/src" --strip-components=1
    if [ "$bootstrap" = autoreconf ]; then
        # The orig tarball is a git export without configure.
        ( cd "$root/src" && autoreconf -fi >"$root/autoreconf.log" 2>&1 ) \
            || { tail -20 "$root/autoreconf.log" >&2; log "$name: autoreconf failed, see $root/autoreconf.log"; exit 1; }
    fi
    log "configuring $name"
    ( cd "$root/build" && "$root/src/configure" --prefix="$root/prefix" "${flags[@]}" \
          CC="$MPICC" >"$root/configure.log" 2>&1 ) \
        || { tail -20 "$root/configure.log" >&2; log "$name: configure failed, see $root/configure.log"; exit 1; }
    log "building $name (make -j$JOBS)"
    make -C "$root/build" -j"$JOBS" >"$root/make.log" 2>&1 \
        || { grep -E 'error|Error' "$root/make.log" | head -30 >&2; log "$name: build failed, see $root/make.log"; exit 1; }
    log "building $name's test programs"
    ( cd "$root/build" && "$tests_fn" ) >"$root/make-tests.log" 2>&1 \
        || { grep -E 'error|Error' "$root/make-tests.log" | head -30 >&2; log "$name: test programs failed to build, see $root/make-tests.log"; exit 1; }
    publish_tree "$name" lib_manifest
    log "$name $version built: $OUTDIR/$name -> $root ($(wc -l < "$root/.built") test programs, $(elapsed_since "$t0") s)"
    exec 8>&-
}

# --- PnetCDF ------------------------------------------------------------------
PNETCDF_VERSION=1.12.3
PNETCDF_DEBVER=1.12.3-1
PNETCDF_RECIPE=1
PNETCDF_FLAGS=(--disable-fortran --disable-cxx --disable-shared --enable-static)
PNETCDF_TESTDIRS=(test examples benchmarks src/utils)
pnetcdf_tests() {
    # PnetCDF's own target that builds every check program without running it.
    make -j"$JOBS" tests
}

# --- HDF5 ----------------------------------------------------------------------
HDF5_VERSION=1.10.8
HDF5_DEBVER=1.10.8+repack1-1
HDF5_RECIPE=2       # 2: h5perf too
HDF5_FLAGS=(--enable-parallel --disable-fortran --disable-cxx --disable-hl
            --disable-java --disable-tools --disable-shared --enable-static)
HDF5_TESTDIRS=(testpar tools/src/h5perf)
hdf5_tests() {
    # testpar's check programs (and test/libh5test, which `make` built).
    make -C testpar -j"$JOBS" t_mpi t_bigio testphdf5 t_cache_image t_pread \
        t_pshutdown t_prestart t_init_term t_shapesame t_filters_parallel t_pflush1 t_pflush2
    # h5perf, HDF5's parallel I/O benchmark (MPI-IO and parallel HDF5, with
    # a check of what it reads back): the tools are off, so only its library
    # and it are built.
    make -C tools/lib -j"$JOBS" && make -C tools/src/h5perf -j"$JOBS" h5perf
}

# --- mpi4py ----------------------------------------------------------------------
# The sdist from PyPI (checked against its known hash), built into a venv of
# Debian's python3 with pip (Cython and setuptools come from PyPI through
# pip's build isolation).  -O0: at -O2 the compile of the generated 5 MB
# MPI.c takes over 20 minutes of CPU on a 2-core machine, at -O0 half a
# minute; the tests wait on MPI and files, not on that code.  The manifest is
# the built module and the test suite (src/test), which run-clients.sh runs.
MPI4PY_VERSION=4.0.3
MPI4PY_SHA256=de2710d73e25e115865a3ab63d34a54b2d8608b724f761c567b6ad58dd475609
MPI4PY_RECIPE=2
MPI4PY_PYTHON=${BBFS_PYTHON:-/usr/bin/python3}
build_mpi4py() {
    local t0 tb key root
    t0=$(now)
    tb="$CACHE/downloads/mpi4py-$MPI4PY_VERSION.tar.gz"
    [ -x "$MPI4PY_PYTHON" ] || { log "mpi4py: $MPI4PY_PYTHON missing (tools/install-deps.sh installs python3, python3-venv and python3-dev)"; exit 1; }
    key=$( { echo "$MPI4PY_SHA256"; echo "recipe $MPI4PY_RECIPE"; "$MPI4PY_PYTHON" --version;
             echo "$CC_VERSION"; echo "$MPICH_ID"; } | sha256sum | cut -c1-16)
    mpi4py_manifest() {
        ( cd "$root" && find src/test venv/lib -type f \( -name '*.so' -o -path 'src/test/*' \) \
              -printf '%p %s %T@\n' | grep -v __pycache__ | LC_ALL=C sort )
    }
    if open_tree mpi4py "$MPI4PY_VERSION" "$key" mpi4py_manifest; then
        log "mpi4py $MPI4PY_VERSION ready: $OUTDIR/mpi4py -> $root (verified, $(elapsed_since "$t0") s)"
        exec 8>&-
        return 0
    fi
    log "cold build of mpi4py $MPI4PY_VERSION in $root"
    rm -rf "$root/src" "$root/venv" "$root/wheel" "$root/.built"
    "$MPI4PY_PYTHON" -m venv "$root/venv" >"$root/build.log" 2>&1 \
        || { tail -5 "$root/build.log" >&2; log "mpi4py: python3 -m venv failed (python3-venv installed?)"; exit 1; }
    if ! echo "$MPI4PY_SHA256  $tb" | sha256sum -c --status 2>/dev/null; then
        log "fetching mpi4py $MPI4PY_VERSION's source from PyPI"
        rm -f "$tb"
        "$root/venv/bin/pip" download -q --no-deps --no-binary :all: "mpi4py==$MPI4PY_VERSION" \
            -d "$CACHE/downloads" >&2 \
            || { log "mpi4py: pip download from PyPI failed"; exit 1; }
        echo "$MPI4PY_SHA256  $tb" | sha256sum -c --status \
            || { log "mpi4py: $tb is not the sdist this recipe knows (sha256 differs)"; exit 1; }
    fi
    mkdir -p "$root/src"
    tar -xzf "$tb" -C "$root/src" --strip-components=1
    # LDFLAGS: Debian's python adds -L/usr/lib/x86_64-linux-gnu ahead of
    # mpicc's own, where Debian's MPICH (libhdf5-mpich's) would win the link
    # and mpi4py's probes would find its Fortran calls, absent from ours.
    ( cd "$root/src" && env MPICC="$MPICC" CFLAGS="-O0" LDFLAGS="-L$MPI_PREFIX/lib" \
          "$root/venv/bin/pip" wheel -v --no-deps -w "$root/wheel" . ) >>"$root/build.log" 2>&1 \
        || { grep -E 'error|Error' "$root/build.log" | head -20 >&2; log "mpi4py: build failed, see $root/build.log"; exit 1; }
    "$root/venv/bin/pip" install -q --no-deps "$root"/wheel/mpi4py-*.whl >>"$root/build.log" 2>&1 \
        || { tail -5 "$root/build.log" >&2; log "mpi4py: install into the venv failed, see $root/build.log"; exit 1; }
    "$root/venv/bin/python" -c 'from mpi4py import MPI; import sys; sys.exit(MPI.Get_library_version().find("MPICH") < 0)' >>"$root/build.log" 2>&1 \
        || { tail -3 "$root/build.log" >&2; log "mpi4py: the built module does not load against $MPI_PREFIX, see $root/build.log"; exit 1; }
    publish_tree mpi4py mpi4py_manifest
    log "mpi4py $MPI4PY_VERSION built: $OUTDIR/mpi4py -> $root ($(elapsed_since "$t0") s)"
    exec 8>&-
}

for lib in "${LIBS[@]}"; do
    case $lib in
        pnetcdf)
            tb=$(source_tarball pnetcdf "$PNETCDF_DEBVER")
            build_lib pnetcdf "$PNETCDF_VERSION" "$tb" "$PNETCDF_RECIPE" autoreconf \
                PNETCDF_FLAGS pnetcdf_tests PNETCDF_TESTDIRS ;;
        hdf5)
            tb=$(source_tarball hdf5 "$HDF5_DEBVER")
            build_lib hdf5 "$HDF5_VERSION" "$tb" "$HDF5_RECIPE" none \
                HDF5_FLAGS hdf5_tests HDF5_TESTDIRS ;;
        mpi4py) build_mpi4py ;;
        *) log "unknown library '$lib' (pnetcdf, hdf5, mpi4py)"; exit 1 ;;
    esac
done
