#!/usr/bin/env bash
# Stop the daemons tests/slurm/start-cluster.sh started (slurmd, slurmctld, slurmdbd, MariaDB, munged), each by
# the pid in its pid file. Packages, configs and the accounting database stay: start-cluster.sh brings it all
# back in seconds.
#
#   tests/slurm/stop-cluster.sh                    # all of them
#   tests/slurm/stop-cluster.sh slurmd mariadb     # only these (names: slurmd slurmctld slurmdbd mariadb munged)
set -euo pipefail
[ "$(id -u)" = 0 ] || { echo "[stop-cluster] ERROR: must run as root" >&2; exit 1; }

ALL=(slurmd slurmctld slurmdbd mariadb munged)   # the order they stop in: clients before what they need
if [ $# -gt 0 ]; then WANT=("$@"); else WANT=("${ALL[@]}"); fi
for name in "${WANT[@]}"; do
    case " ${ALL[*]} " in *" $name "*) ;; *) echo "[stop-cluster] ERROR: unknown daemon $name (known: ${ALL[*]})" >&2; exit 2 ;; esac
done
wanted() { case " ${WANT[*]} " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

stop_pid() {  # stop_pid NAME PIDFILE
    local pid
    [ -s "$2" ] && pid=$(cat "$2") && kill -0 "$pid" 2>/dev/null || return 0
    echo "[stop-cluster] stopping $1 (pid $pid)"
    kill "$pid"
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || return 0; sleep 1; done
    echo "[stop-cluster] ERROR: $1 (pid $pid) did not stop" >&2; return 1
}
status=0
for name in "${ALL[@]}"; do
    wanted "$name" || continue
    case $name in
        slurmd|slurmctld|slurmdbd) stop_pid "$name" "/run/slurm/$name.pid" || status=1 ;;
        munged) stop_pid munged /run/munge/munged.pid || status=1 ;;
        mariadb)
            if command -v mariadb-admin >/dev/null && mariadb-admin ping >/dev/null 2>&1; then
                echo "[stop-cluster] stopping MariaDB"
                mariadb-admin shutdown || status=1
            fi ;;
    esac
done
exit $status
