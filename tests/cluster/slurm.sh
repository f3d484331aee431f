#!/usr/bin/env bash
# slurm.sh — a real Slurm on the emulated cluster of cluster.sh (issue 33):
# munged and slurmctld in the head, one slurmd in every node, all of them
# inside the cluster's namespaces and all their files in DIR/slurm.
#
#   slurm.sh up DIR          on a cluster up in DIR: start them, wait until
#                            every node is idle
#   slurm.sh run DIR CMD     CMD in the head with SLURM_CONF set (sbatch,
#                            srun, squeue, scancel ...)
#   slurm.sh down DIR        stop them and remove DIR/slurm (cluster.sh down
#                            kills whatever is left in the namespaces)
#   slurm.sh with N DIR CMD  cluster up, slurm up, CMD in the head, then
#                            both down, even when CMD fails or is interrupted
#
# The daemons are Debian's slurm-wlm (22.05) and munge.  munged listens on a
# socket in DIR/slurm with a key made for this cluster, so nothing of the
# machine's own munge or Slurm is used or touched.  Jobs launch MPI
# programs with srun (PMI-2's plugin, which MPICH's simple PMI speaks) or
# with mpiexec inside the allocation.  No cgroups: processes are tracked by
# their parents (proctrack/linuxproc), so a daemon a job starts and leaves
# behind (bbserver) lives on until the cluster goes down.
set -euo pipefail

die() { echo "slurm.sh: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
cluster=$here/cluster.sh

in_node() {   # in_node DIR NODE CMD...
    local dir=$1 node=$2; shift 2
    "$cluster" exec "$dir" "$node" "$@"
}

conf() {   # conf DIR N: DIR/slurm/slurm.conf
    local dir=$1 n=$2 s=$1/slurm
    cat > "$s/slurm.conf" <<EOF
ClusterName=bbfs
SlurmctldHost=head(10.77.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$s/munge.socket
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool-%n
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd-%n.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd-%n.log
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=pmi2
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
KillWait=5
NodeName=node[0-$((n - 1))] NodeAddr=10.77.0.[10-$((9 + n))] CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

up() {
    local dir=$1 s=$1/slurm n i
    n=$(cat "$dir/nodes" 2>/dev/null) || die "no cluster in $dir (cluster.sh up N $dir first)"
    for t in munged mungekey slurmctld slurmd sbatch srun sinfo; do
        command -v "$t" >/dev/null || die "$t is missing: install slurm-wlm and munge (tools/install-deps.sh)"
    done
    rm -rf "$s" && mkdir -p "$s/state" && chmod 700 "$s"
    mungekey -c -k "$s/munge.key" >/dev/null
    conf "$dir" "$n"
    in_node "$dir" head munged --force --socket="$s/munge.socket" --key-file="$s/munge.key" \
        --pid-file="$s/munged.pid" --log-file="$s/munged.log" --seed-file="$s/munged.seed"
    in_node "$dir" head env SLURM_CONF="$s/slurm.conf" slurmctld
    for i in $(seq 0 $((n - 1))); do
        in_node "$dir" "node$i" env SLURM_CONF="$s/slurm.conf" slurmd -N "node$i"
    done
    for _ in $(seq 300); do
        [ "$(run "$dir" sinfo -h -o '%D %t' 2>/dev/null)" = "$n idle" ] && return 0
        sleep 0.1
    done
    run "$dir" sinfo >&2 || true
    tail -5 "$s/slurmctld.log" >&2 || true
    die "the $n nodes did not come up idle in 30 s (logs in $s)"
}

run() {   # run DIR CMD...
    local dir=$1; shift
    in_node "$dir" head env SLURM_CONF="$dir/slurm/slurm.conf" "$@"
}

down() {
    local dir=$1
    [ -d "$dir/slurm" ] || return 0
    local pids=() p
    for f in "$dir"/slurm/*.pid; do
        [ -f "$f" ] && pids+=("$(cat "$f")")
    done
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    # slurmctld saves its state as it stops: removing the directory under
    # it failed now and then ("Directory not empty").  Up to 10 s each.
    for p in "${pids[@]}"; do
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$dir/slurm"
}

cmd=${1:-}; shift || true
case $cmd in
    up) [ $# = 1 ] || die "usage: slurm.sh up DIR"; up "$(cd "$1" && pwd)" ;;
    run) [ $# -ge 2 ] || die "usage: slurm.sh run DIR CMD..."; d=$(cd "$1" && pwd); shift; run "$d" "$@" ;;
    down) [ $# = 1 ] || die "usage: slurm.sh down DIR"; down "$(cd "$1" 2>/dev/null && pwd || echo "$1")" ;;
    with)
        [ $# -ge 3 ] || die "usage: slurm.sh with N DIR CMD..."
        n=$1; mkdir -p "$2"; dir=$(cd "$2" && pwd); shift 2
        trap 'down "$dir"; "$cluster" down "$dir"' EXIT INT TERM
        "$cluster" up "$n" "$dir"
        up "$dir"
        run "$dir" env CLUSTER_DIR="$dir" "$@" ;;
    *) die "usage: slurm.sh up|run|down|with ... (see the top of $0)" ;;
esac
