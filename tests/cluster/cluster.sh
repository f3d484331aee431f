#!/usr/bin/env bash
# cluster.sh — this machine as N emulated nodes, for tests of bbfs across
# nodes (docs/cluster.md).
#
#   cluster.sh up N DIR          start nodes node0..node(N-1) and a head
#   cluster.sh down DIR          stop them; removes everything up made
#   cluster.sh mpiexec DIR ARGS  mpiexec ARGS from the head, with the
#                                nodes as hosts (-hosts node0,node1 ...,
#                                or $CLUSTER_HOSTS)
#   cluster.sh exec DIR NODE CMD run CMD inside a node (NODE: node0, head)
#   cluster.sh with N DIR CMD    up, run CMD with CLUSTER_DIR=DIR, down,
#                                even when CMD fails or is interrupted
#
# up also writes DIR/mpiexec, an mpiexec that runs across the nodes (for
# scripts that take one: MPIEXEC=DIR/mpiexec), and DIR/rsh (below).
#
# A node is a long-lived holder process in namespaces of its own (mount,
# UTS, IPC, network): its own host name, /etc/hosts and /etc/hostname bound
# in its mount namespace, a private tmpfs on DIR/local (its node-local
# storage: BBFS_LOGDIR) and on /dev/shm.  With CLUSTER_LOCAL=disk, DIR/local
# is instead a directory of its own on the disk under DIR (DIR/.disks/nodeI,
# bound there and hidden from the other nodes): writes to tmpfs run at half
# the disk's page-cache speed on this VM, so benchmarks that compare with a
# one-node run on disk use it.  Everything else of the file system
# is shared and plays the parallel file system.  Each node has a veth
# interface, 10.77.0.(10+i)/24, on a bridge in the head's network namespace;
# the head (10.77.0.1) runs mpiexec.  Nothing is created in the host's own
# network namespace, and nothing is sent to any other address.
#
# MPICH's hydra reaches the nodes with -launcher ssh -launcher-exec DIR/rsh:
# that script stands in for ssh and runs the proxy inside the named node
# with nsenter.  Each node's processes announce their node's address
# (MPIR_CVAR_CH3_INTERFACE_HOSTNAME), so nemesis uses TCP between nodes and
# shared memory within one.
#
# Environment: MPIEXEC (default: mpiexec in PATH), CLUSTER_LOCAL (tmpfs, the
# default, or disk).  Needs root, unshare,
# nsenter and ip (util-linux, iproute2).
set -euo pipefail

die() { echo "cluster.sh: $*" >&2; exit 1; }
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
state() { cat "$1/$2" 2>/dev/null; }

# holder: a process that only keeps namespaces alive; its pid names them.
start_holder() {   # start_holder PIDFILE
    # named after the cluster, so that its processes can be told from
    # another cluster's (pgrep -f "^bbfs-cluster-holder DIR/")
    unshare --mount --uts --ipc --net --propagation private -- \
        bash -c 'exec -a "bbfs-cluster-holder $0" sleep infinity' "$1" \
        </dev/null >/dev/null 2>&1 &
    echo $! > "$1"
    disown $!          # killed by down, without a "Killed" line from this shell
    # wait until unshare has exec'ed sleep inside the new namespaces
    for _ in $(seq 100); do
        [ "$(readlink /proc/$!/ns/net)" != "$(readlink /proc/$$/ns/net)" ] && return 0
        sleep 0.01
    done
    die "a node holder did not start"
}

in_ns() {   # in_ns PID CMD...: CMD in the holder's namespaces
    local pid=$1; shift
    nsenter -t "$pid" --mount --uts --ipc --net -- "$@"
}

up() {
    local n=$1 dir=$2 i pid head
    [ "$(id -u)" = 0 ] || die "needs root (namespaces, mounts, veth)"
    for t in unshare nsenter ip; do
        command -v $t >/dev/null || die "$t is missing (Debian: util-linux, iproute2)"
    done
    [ "$n" -ge 1 ] && [ "$n" -le 200 ] || die "node count $n: 1 to 200"
    mkdir -p "$dir" && dir=$(cd "$dir" && pwd)
    [ ! -e "$dir/nodes" ] || die "$dir holds a cluster already (cluster.sh down $dir)"
    local storage=${CLUSTER_LOCAL:-tmpfs} local_mount
    case $storage in tmpfs|disk) ;; *) die "CLUSTER_LOCAL=$storage: tmpfs or disk" ;; esac
    mkdir -p "$dir/local" "$dir/etc"
    echo "$n" > "$dir/nodes"

    # /etc/hosts of every node and of the head: loopback, then the cluster
    { echo "127.0.0.1 localhost"; echo "10.77.0.1 head"
      for i in $(seq 0 $((n - 1))); do echo "10.77.0.$((10 + i)) node$i"; done; } > "$dir/etc/hosts"

    start_holder "$dir/head.pid"; head=$(state "$dir" head.pid)
    in_ns "$head" sh -c "hostname head && ip link set lo up &&
        ip link add br0 type bridge && ip addr add 10.77.0.1/24 dev br0 && ip link set br0 up &&
        echo head > '$dir/etc/hostname.head' &&
        mount --bind '$dir/etc/hosts' /etc/hosts && mount --bind '$dir/etc/hostname.head' /etc/hostname"
    for i in $(seq 0 $((n - 1))); do
        start_holder "$dir/node$i.pid"; pid=$(state "$dir" node$i.pid)
        echo "node$i" > "$dir/etc/hostname.node$i"
        if [ "$storage" = disk ]; then
            # bound first, then every node's directory covered by an empty
            # tmpfs, so that this node sees its own one only
            mkdir -p "$dir/.disks/node$i" && chmod 1777 "$dir/.disks/node$i"
            local_mount="mount --bind '$dir/.disks/node$i' '$dir/local' &&
                mount -t tmpfs -o ro,size=4k node$i-hide '$dir/.disks'"
        else
            local_mount="mount -t tmpfs -o size=4g,mode=1777 node$i-local '$dir/local'"
        fi
        # the veth pair is made in the head and one end moved into the node
        in_ns "$head" ip link add "veth$i" type veth peer name eth0 netns "$pid"
        in_ns "$head" ip link set "veth$i" master br0 up
        in_ns "$pid" sh -c "hostname node$i && ip link set lo up &&
            ip addr add 10.77.0.$((10 + i))/24 dev eth0 && ip link set eth0 up &&
            mount --bind '$dir/etc/hosts' /etc/hosts &&
            mount --bind '$dir/etc/hostname.node$i' /etc/hostname &&
            $local_mount &&
            mount -t tmpfs -o mode=1777 node$i-shm /dev/shm"
    done

    # the stand-in for ssh: [ssh options] HOST COMMAND... (a remote shell
    # would run COMMAND as one string)
    cat > "$dir/rsh" <<RSH
#!/bin/sh
while [ \$# -gt 0 ]; do case \$1 in -*) shift ;; *) break ;; esac; done
host=\$1; shift
pid=\$(cat "$dir/\$host.pid" 2>/dev/null) || { echo "rsh: no node \$host in $dir" >&2; exit 255; }
exec nsenter -t "\$pid" --mount --uts --ipc --net -- env MPIR_CVAR_CH3_INTERFACE_HOSTNAME="\$host" /bin/sh -c "\$*"
RSH
    chmod +x "$dir/rsh"

    # an mpiexec for scripts that take one (MPIEXEC=DIR/mpiexec make check)
    cat > "$dir/mpiexec" <<MPX
#!/bin/sh
MPIEXEC="${MPIEXEC:-mpiexec}" exec "$self" mpiexec "$dir" "\$@"
MPX
    chmod +x "$dir/mpiexec"
}

down() {
    local dir=$1 f pid
    [ -d "$dir" ] || return 0
    # every process still inside a node (ranks, proxies, servers), then holders
    for f in "$dir"/node*.pid "$dir"/head.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        local ns; ns=$(readlink "/proc/$pid/ns/net" 2>/dev/null) || continue
        for p in /proc/[0-9]*; do
            [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$ns" ] || continue
            kill -9 "${p#/proc/}" 2>/dev/null || true
        done
    done
    # the namespaces (and their veths, bridge and mounts) go with their last process
    for f in "$dir"/node*.pid "$dir"/head.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        for _ in $(seq 200); do [ -d "/proc/$pid" ] || break; sleep 0.01; done
        rm -f "$f"
    done
    rm -rf "$dir/etc" "$dir/rsh" "$dir/mpiexec" "$dir/nodes" "$dir/.disks"
    rmdir "$dir/local" 2>/dev/null || true
}

hosts_of() {   # hosts_of DIR: node0,node1,...
    local n; n=$(state "$1" nodes) || die "no cluster in $1 (cluster.sh up N $1)"
    seq -s, -f 'node%g' 0 $((n - 1))
}

cmd=${1:-}; shift || true
case $cmd in
    up) [ $# = 2 ] || die "usage: cluster.sh up N DIR"; up "$1" "$2" ;;
    down) [ $# = 1 ] || die "usage: cluster.sh down DIR"; down "$(cd "$1" 2>/dev/null && pwd || echo "$1")" ;;
    mpiexec)
        [ $# -ge 1 ] || die "usage: cluster.sh mpiexec DIR ARGS..."
        dir=$(cd "$1" && pwd); shift
        hosts=${CLUSTER_HOSTS:-$(hosts_of "$dir")}
        # (in the caller's directory: hydra starts the processes in
        # mpiexec's, and nsenter would leave it at /)
        exec nsenter -t "$(state "$dir" head.pid)" --mount --uts --ipc --net --wd="$PWD" -- \
            "${MPIEXEC:-mpiexec}" -launcher ssh -launcher-exec "$dir/rsh" -hosts "$hosts" "$@" ;;
    exec)
        [ $# -ge 3 ] || die "usage: cluster.sh exec DIR NODE CMD..."
        dir=$(cd "$1" && pwd); node=$2; shift 2
        pid=$(state "$dir" "$node.pid") || die "no node $node in $dir"
        exec nsenter -t "$pid" --mount --uts --ipc --net -- "$@" ;;
    with)
        [ $# -ge 3 ] || die "usage: cluster.sh with N DIR CMD..."
        n=$1; dir=$2; shift 2
        mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
        trap 'down "$dir"' EXIT
        trap 'exit 130' INT TERM
        up "$n" "$dir"
        rc=0; CLUSTER_DIR=$dir "$@" || rc=$?
        exit $rc ;;
    *) die "usage: cluster.sh up N DIR | down DIR | mpiexec DIR ARGS | exec DIR NODE CMD | with N DIR CMD" ;;
esac
