# build-common.sh — what build-mpich.sh and build-ompi.sh share: the cache,
# fetching a Debian source package, hashing and unpacking a source, and
# the checks after a build of the driver inside an MPI tree.  Sourced.

CACHE=${BBFS_CACHE_DIR:-${HOME:-/tmp}/.cache/bbfs}
JOBS=${BBFS_JOBS:-$(nproc)}
mkdir -p "$CACHE/downloads"

log() { printf '[%s] %s\n' "${LOG_TAG:-build}" "$*" >&2; }
now() { date +%s.%N; }
elapsed_since() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.0f", b-a}'; }

# relink TARGET LINK: LINK points at TARGET.  A link already right is left
# alone: ln -sfn removes it first, and a test running meanwhile (CI builds
# while the suite runs) would find no MPI there.
relink() { [ "$(readlink "$2")" = "$1" ] || ln -sfn "$1" "$2"; }

# source_tarball PACKAGE VERSION [SUITE]: the path of the upstream tarball
# of Debian's source package, in $CACHE/downloads (fetched once).  VERSION
# is upstream's (4.0.2) or Debian's (1.12.3-1, asked for first, then any
# of that upstream version).  An empty SUITE uses this machine's deb-src
# entries (tools/install-deps.sh adds bookworm's); another suite gets an
# apt state of its own under the cache, so that no source list of the
# machine, and no package, changes.
source_tarball() {
    local pkg=$1 debver=$2 suite=${3:-} upver=${2%-*} f tmp
    f=$(ls "$CACHE/downloads/${pkg}_${upver}".orig.tar.* 2>/dev/null | head -1 || true)
    if [ -n "$f" ]; then printf '%s\n' "$f"; return 0; fi
    log "fetching $pkg $upver from Debian's ${suite:+$suite }source package"
    local opts=()
    if [ -n "$suite" ]; then
        local state="$CACHE/apt-$suite"
        mkdir -p "$state/lists/partial"
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
            > "$state/sources.list"
        opts=(-o Dir::Etc::SourceList="$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o Dir::State::Lists="$state/lists")
        ls "$state"/lists/*Sources* >/dev/null 2>&1 \
            || apt-get "${opts[@]}" update -q >"$state/update.log" 2>&1 \
            || { log "apt-get update for $suite's sources failed, see $state/update.log"; exit 1; }
    fi
    tmp=$(mktemp -d "$CACHE/downloads/apt.XXXXXX")
    ( cd "$tmp" && { apt-get "${opts[@]}" source --download-only "$pkg=$debver" >/dev/null 2>&1 \
                     || apt-get "${opts[@]}" source --download-only "$pkg" >/dev/null; } ) \
        || { rm -rf "$tmp"; log "apt-get source $pkg failed: is a deb-src entry configured? (tools/install-deps.sh adds one)"; exit 1; }
    f=$(ls "$tmp/${pkg}_${upver}".orig.tar.* 2>/dev/null | head -1 || true)
    [ -n "$f" ] || { rm -rf "$tmp"; log "Debian's $pkg source is not version $upver"; exit 1; }
    mv "$f" "$CACHE/downloads/"; rm -rf "$tmp"
    printf '%s\n' "$CACHE/downloads/$(basename "$f")"
}

# source_hash SOURCE MARKER: a hash of a source tarball, or of a source
# tree (names, sizes, times; not the linked driver), which must hold MARKER.
source_hash() {
    local source=$1 marker=$2
    if [ -d "$source" ]; then
        [ -f "$source/$marker" ] || { log "$source is not the source tree expected (no $marker)"; exit 1; }
        (cd "$source" && find . -type f ! -path '*/bbfs/*' -printf '%P %s %T@\n' | LC_ALL=C sort | sha256sum | cut -c1-64)
    elif [ -f "$source" ]; then
        sha256sum < "$source" | cut -c1-64
    else
        log "source '$source' is neither a directory nor a tarball"; exit 1
    fi
}

# unpack_source SOURCE DIR: a tarball's top directory, or a tree, as DIR.
unpack_source() {
    mkdir -p "$2"
    if [ -d "$1" ]; then cp -a "$1"/. "$2"/
    else tar -xf "$1" -C "$2" --strip-components=1; fi
}

# cache_tree DIR: the cached tree $CACHE/DIR (ROOT, with SRC, BLD and
# PREFIX in it), locked for this build (one build of a tree at a time).
cache_tree() {
    ROOT="$CACHE/$1"
    SRC="$ROOT/src"; BLD="$ROOT/build"; PREFIX="$ROOT/prefix"
    mkdir -p "$ROOT"
    exec 9>"$ROOT/.lock"
    flock 9
}

# fresh_source SOURCE: a cold build of the tree: everything built before
# goes, and SOURCE is unpacked as $SRC.
fresh_source() {
    log "cold build: preparing source in $SRC"
    rm -rf "$SRC" "$BLD" "$PREFIX" "$ROOT"/.configured "$ROOT"/.built
    unpack_source "$1" "$SRC"
}

# follow_checkout ROOT OBJDIR: the cached tree compiles the driver of the
# last checkout that built there.  make compares times only, so objects
# built from another checkout can look newer than this one's sources:
# forget them (OBJDIR) when the checkout changes.
follow_checkout() {
    if [ "$(cat "$1/.checkout" 2>/dev/null)" != "$TOPDIR" ]; then
        rm -rf "$2"
        echo "$TOPDIR" > "$1/.checkout"
    fi
}

# configure_once NAME: configure $SRC in $BLD for $PREFIX with
# CONFIG_FLAGS and BUILD_CFLAGS, once per cached tree ($ROOT).
configure_once() {
    [ -f "$ROOT/.configured" ] && return 0
    log "configuring $1"
    mkdir -p "$BLD"
    ( cd "$BLD" && "$SRC/configure" --prefix="$PREFIX" "${CONFIG_FLAGS[@]}" \
        CFLAGS="$BUILD_CFLAGS" >"$ROOT/configure.log" 2>&1 ) \
        || { log "$1 configure failed, see $ROOT/configure.log"; tail -20 "$ROOT/configure.log" >&2; exit 1; }
}

# build_and_install NAME DRIVER_DIR LIBMPI_GLOB: make $BLD (the driver
# must compile without warnings), then install.  A driver change only
# changes libmpi (the driver is inside it): after the first full install,
# copy just that library (a full `make install` costs 15 s and more).
# DRIVER_DIR is the driver's path inside the tree (ROMIO's bbfs link).
build_and_install() {
    local name=$1 driver=$2 built_lib
    log "building $name in $BLD"
    make -C "$BLD" -j"$JOBS" >"$ROOT/make.log" 2>&1 || build_failed "$name"
    check_driver_warnings "$ROOT/make.log" "$driver/" "$BLD/$driver"
    built_lib=$(ls "$BLD"/$3 2>/dev/null | head -1)
    if [ -f "$ROOT/.built" ] && [ -n "$built_lib" ] && [ -f "$PREFIX/lib/$(basename "$built_lib")" ]; then
        install_if_changed "$built_lib"
    else
        make -C "$BLD" install >"$ROOT/install.log" 2>&1 \
            || { tail -20 "$ROOT/install.log" >&2; log "$name install failed, see $ROOT/install.log"; exit 1; }
    fi
    link_bbserver
}

# build_failed NAME: the errors of $ROOT/make.log, and exit.
build_failed() {
    grep -E 'error|Error' "$ROOT/make.log" | head -30 >&2
    log "$1 build failed, see $ROOT/make.log"; exit 1
}

# install_if_changed LIB: a built library into $PREFIX/lib, unless the one
# there is the same.
install_if_changed() {
    cmp -s "$1" "$PREFIX/lib/$(basename "$1")" || install -m 0755 "$1" "$PREFIX/lib/"
}

# link_bbserver: the driver starts this node's bbserver when a file needs
# one, and looks for it beside the libmpi it is in (ad_bbfs_server.c):
# $PREFIX/bin.  (A link to this build's program, made by `make`; like the
# driver's sources, it follows the last checkout that built here.)
link_bbserver() { relink "$BUILDDIR/bbserver/bbserver" "$PREFIX/bin/bbserver"; }

# check_driver_warnings MAKE_LOG PATH_PATTERN OBJDIR: the driver compiles
# without warnings.  Nothing else reads the build's log, and gcc's defaults
# catch real bugs (a local int once shadowed a list of handles:
# -Wint-conversion).  Only what this make compiled is in the log; its
# objects go, so that the next make compiles them again.
check_driver_warnings() {
    if grep -q "$2.*warning:" "$1"; then
        grep -A4 "$2.*warning:" "$1" >&2
        rm -rf "$3"
        log "the bbfs driver compiled with warnings (above; $1): fix them"; exit 1
    fi
}
