#!/usr/bin/env bash
# Start a real single-node SLURM cluster on this machine (Debian/Ubuntu, run as root, no systemd needed).
#
#   sudo tests/slurm/start-cluster.sh          # idempotent: a cluster that is already up is left alone
#   tests/slurm/stop-cluster.sh                 # stops the daemons again (configs and accounting DB stay)
#
# What it sets up, in order (each step is skipped when it is already done):
#   1. packages   apt: slurm-wlm (slurmctld + slurmd + client), slurmdbd, munge, mariadb-server
#   2. munge      the shared key /etc/munge/munge.key (made if absent) and munged, as user munge
#   3. MariaDB    mariadbd via mysqld_safe; database slurm_acct_db and user slurm@localhost for slurmdbd
#   4. slurmdbd   accounting on MariaDB: the executor plugin polls `sacct`, so accounting must be on
#   5. slurm.conf one node, NodeAddr 127.0.0.1, declaring what is really here (`slurmd -C`: CPUs, sockets,
#                 cores; RealMemory a bit below the memory available now) and NGPUS pretend GPUs as a
#                 generic resource whose device files are empty files, so GPU rules' `--gpus=N` requests are scheduled
#                 and accounted (gres/gpu in sacct's AllocTRES) although no GPU exists
#   6. slurmctld + slurmd, then cluster, account and user in the accounting database
#   7. waits until `sinfo` shows the node idle and `sacctmgr` lists the cluster and account
#
# Partitions: `cpu` (default) and `gpu`, both on the one node, as in profiles/slurm/partitions.yaml.
# Settings (environment): SLURM_CLUSTER (wobble), SLURM_ACCOUNT (wobble),
# SLURM_NGPUS (2 pretend GPUs), SLURM_MEM_MARGIN_MB (1024, kept back from the available memory).
# Logs of the daemons: /var/log/slurm/, /var/log/munge/, /var/log/mysql-wobble.log.
# Not covered by a single node: several nodes, real GPUs (device binding, CUDA_VISIBLE_DEVICES), cgroups.
set -euo pipefail

CLUSTER=${SLURM_CLUSTER:-wobble}
ACCOUNT=${SLURM_ACCOUNT:-wobble}
NGPUS=${SLURM_NGPUS:-2}
MEM_MARGIN_MB=${SLURM_MEM_MARGIN_MB:-1024}
DB_PASS=${SLURM_DB_PASS:-wobble-slurmdbd}
ETC=/etc/slurm
NODE=$(hostname -s)

say() { echo "[start-cluster] $*"; }
die() { echo "[start-cluster] ERROR: $*" >&2; exit 1; }
# wait_for SECONDS WHAT CMD...: poll CMD once a second until it succeeds
wait_for() {
    local limit=$1 what=$2; shift 2
    for _ in $(seq "$limit"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
    die "$what did not come up within ${limit}s (see /var/log/slurm, /var/log/munge, /var/log/mysql-wobble.log)"
}
# running NAME: the daemon NAME (slurmdbd, slurmctld, slurmd, munged) runs, by the pid in its pid file
pidfile() { case "$1" in munged) echo /run/munge/munged.pid ;; *) echo "/run/slurm/$1.pid" ;; esac; }
running() { local f; f=$(pidfile "$1"); [ -s "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }
# stop NAME: end that daemon by its pid file and wait until it is gone
stop() {
    running "$1" || return 0
    kill "$(cat "$(pidfile "$1")")"
    for _ in $(seq 30); do running "$1" || return 0; sleep 1; done
    die "$1 did not stop"
}

[ "$(id -u)" = 0 ] || die "must run as root (installs packages, starts daemons)"

# ---- 1. packages -------------------------------------------------------------------------------------
PKGS=(slurm-wlm slurm-client slurmdbd munge mariadb-server)
missing=()
for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "apt-get not found: install ${missing[*]} by hand"
    say "installing ${missing[*]} (apt, about 2 minutes)"
    # No init system here: keep the packages' maintainer scripts from starting daemons (we start them below).
    own_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && own_policy=1
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { apt-get install -y -q --no-install-recommends "${missing[@]}"; }
    apt_install >/var/log/wobble-slurm-apt.log 2>&1 \
        || { apt-get update -q >>/var/log/wobble-slurm-apt.log 2>&1 && apt_install >>/var/log/wobble-slurm-apt.log 2>&1; } \
        || { [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d; die "apt install failed, see /var/log/wobble-slurm-apt.log"; }
    [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
fi

# ---- 2. munge ----------------------------------------------------------------------------------------
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    say "creating the munge key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
if ! running munged; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged
fi
wait_for 20 munged sh -c 'munge -n | unmunge'

# ---- 3. MariaDB --------------------------------------------------------------------------------------
install -d -o mysql -g mysql -m 0755 /run/mysqld
if [ ! -d /var/lib/mysql/mysql ]; then
    say "initialising the MariaDB data directory"
    mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/var/log/mysql-wobble.log 2>&1
fi
if ! mariadb-admin ping >/dev/null 2>&1; then
    say "starting MariaDB"
    setsid nohup mysqld_safe --user=mysql >>/var/log/mysql-wobble.log 2>&1 </dev/null &
fi
wait_for 60 MariaDB mariadb-admin ping
mariadb -u root <<SQL
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '${DB_PASS}';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
FLUSH PRIVILEGES;
SQL

# ---- 4. slurmdbd -------------------------------------------------------------------------------------
install -d -m 0755 "$ETC"
install -d -o slurm -g slurm -m 0755 /var/log/slurm /var/spool/slurmctld /var/spool/slurmd /run/slurm
umask 077
cat >"$ETC/slurmdbd.conf.new" <<EOF
# written by tests/slurm/start-cluster.sh
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=slurm
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurm/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=${DB_PASS}
StorageLoc=slurm_acct_db
EOF
umask 022
# install_conf FILE MODE: move FILE.new into place when it differs; returns 0 when the file changed
install_conf() {
    if [ -f "$1" ] && cmp -s "$1" "$1.new"; then rm -f "$1.new"; return 1; fi
    mv "$1.new" "$1" && chown slurm:slurm "$1" && chmod "$2" "$1"
}
if install_conf "$ETC/slurmdbd.conf" 0600 && running slurmdbd; then
    say "slurmdbd.conf changed: restarting slurmdbd"; stop slurmdbd
fi
if ! running slurmdbd; then say "starting slurmdbd"; slurmdbd; fi

# ---- 5. slurm.conf -----------------------------------------------------------------------------------
hw=$(slurmd -C | head -1)   # NodeName=... CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=...
field() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$hw"; }
avail_mb=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
real_mb=$(( avail_mb - MEM_MARGIN_MB ))
if [ -f "$ETC/slurm.conf" ] && grep -q "^NodeName=$NODE " "$ETC/slurm.conf" && running slurmctld; then
    # keep the RealMemory of the running cluster: memory available drifts, a cluster that is up stays as is
    real_mb=$(sed -n "s/^NodeName=$NODE .*RealMemory=\([0-9]*\).*/\1/p" "$ETC/slurm.conf")
fi
cat >"$ETC/slurm.conf.new" <<EOF
# written by tests/slurm/start-cluster.sh: one node on 127.0.0.1 with accounting through slurmdbd
ClusterName=${CLUSTER}
SlurmctldHost=${NODE}(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# no cgroups without systemd: track processes by parent id, no CPU binding
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
# CPUs are consumed; memory requests are checked against the node (RealMemory) but not summed
SelectTypeParameters=CR_CPU
GresTypes=gpu
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=gres/gpu
# sacct's Comment column then shows each job's rule (the plugin's --comment rule_<name>_wildcards_...)
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
# keep finished jobs visible to squeue for a while (the plugin may also poll squeue)
MinJobAge=600
NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=$(field CPUs) Boards=$(field Boards) SocketsPerBoard=$(field SocketsPerBoard) CoresPerSocket=$(field CoresPerSocket) ThreadsPerCore=$(field ThreadsPerCore) RealMemory=${real_mb} Gres=gpu:${NGPUS} State=UNKNOWN
PartitionName=cpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=gpu Nodes=ALL MaxTime=INFINITE State=UP
EOF
# Slurm drops a GPU without a device file: pretend GPUs are empty files (index = number at the end)
install -d -m 0755 /var/lib/wobble-slurm
for i in $(seq 0 $(( NGPUS - 1 ))); do touch "/var/lib/wobble-slurm/gpu$i"; done
cat >"$ETC/gres.conf.new" <<EOF
# written by tests/slurm/start-cluster.sh: pretend GPUs (empty files, no devices), so --gpus=N is schedulable
NodeName=${NODE} Name=gpu File=/var/lib/wobble-slurm/gpu[0-$(( NGPUS - 1 ))]
EOF
changed=0
install_conf "$ETC/slurm.conf" 0644 && changed=1
install_conf "$ETC/gres.conf" 0644 && changed=1
if [ $changed = 1 ] && { running slurmctld || running slurmd; }; then
    say "slurm.conf changed: restarting slurmctld and slurmd"
    stop slurmd; stop slurmctld
fi

# ---- 6. cluster in the accounting database, slurmctld, slurmd -----------------------------------------
wait_for 60 slurmdbd sacctmgr -n list cluster
sacctmgr -n -P list cluster format=cluster | grep -qx "$CLUSTER" || sacctmgr -i add cluster "$CLUSTER" >/dev/null
if ! running slurmctld; then say "starting slurmctld"; slurmctld; fi
if ! running slurmd; then say "starting slurmd"; slurmd; fi
wait_for 30 slurmctld scontrol ping
sacctmgr -n -P list account format=account | grep -qx "$ACCOUNT" \
    || sacctmgr -i add account "$ACCOUNT" cluster="$CLUSTER" description="wobble tests" >/dev/null
# root comes with an association to account root; add one to $ACCOUNT and make it root's default
if ! sacctmgr -n -P list assoc cluster="$CLUSTER" user=root format=account | grep -qx "$ACCOUNT"; then
    sacctmgr -i add user root account="$ACCOUNT" cluster="$CLUSTER" >/dev/null
    sacctmgr -i modify user root set defaultaccount="$ACCOUNT" >/dev/null
fi

# ---- 7. ready: the node idle, the association known ---------------------------------------------------
node_ready() {
    local state
    state=$(sinfo -h -n "$NODE" -o %T 2>/dev/null)
    case "$state" in
        idle|mixed|allocated) return 0 ;;
        down*|drain*|*drain) scontrol update nodename="$NODE" state=resume >/dev/null 2>&1 || true; return 1 ;;
        *) return 1 ;;
    esac
}
wait_for 60 "node $NODE (sinfo)" node_ready
wait_for 30 "account $ACCOUNT (sacctmgr)" sh -c \
    "sacctmgr -n -P list assoc cluster=$CLUSTER user=root format=account | grep -qx $ACCOUNT"
say "cluster $CLUSTER up: node $NODE ($(field CPUs) CPUs, ${real_mb} MB, ${NGPUS} pretend GPUs), partitions cpu and gpu, account $ACCOUNT"
