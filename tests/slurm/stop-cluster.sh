#!/usr/bin/env bash
# Stop the daemons tests/slurm/start-cluster.sh started (slurmd, slurmctld, slurmdbd, MariaDB, munged), each by
# the pid in its pid file. Packages, configs and the accounting database stay: start-cluster.sh brings it all
# back in seconds.
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "[stop-cluster] ERROR: must run as root" >&2; exit 1; }

stop_pid() {  # stop_pid NAME PIDFILE
    local pid
    [ -s "$2" ] && pid=$(cat "$2") && kill -0 "$pid" 2>/dev/null || return 0
    echo "[stop-cluster] stopping $1 (pid $pid)"
    kill "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 1; done
    echo "[stop-cluster] ERROR: $1 (pid $pid) did not stop" >&2; return 1
}
stop_pid slurmd /run/slurm/slurmd.pid
stop_pid slurmctld /run/slurm/slurmctld.pid
stop_pid slurmdbd /run/slurm/slurmdbd.pid
if command -v mariadb-admin >/dev/null && mariadb-admin ping >/dev/null 2>&1; then
    echo "[stop-cluster] stopping MariaDB"
    mariadb-admin shutdown
fi
stop_pid munged /run/munge/munged.pid
