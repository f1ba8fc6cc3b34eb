#!/usr/bin/env bash
# CTest fixture helper: start or stop a cove-server for the integration tests.
#   server.sh start DIR [cove-server options...]   starts it, waits for DIR/cove.conn
#     (COVE_TEST_SERVERS=N starts a group of N under mpiexec)
#   server.sh stop DIR                             cove stop, then waits for the PID; kills it if it lingers,
#                                                  and then any member of a group that outlived its mpiexec
# Only the PID recorded in DIR/server.pid, and the PIDs the group's members
# logged in DIR/server.log ("cove-server PID: serving as R of N", each still
# a cove-server), are ever signalled.
set -euo pipefail
cmd=$1 dir=$2
shift 2
bin=$(dirname "$0")
# The PIDs a group's members logged ("cove-server PID: serving as R of N").
members() { sed -n 's/.*cove-server \([0-9][0-9]*\): serving as .*/\1/p' "$1/server.log" 2>/dev/null || true; }
case "$cmd" in
  start)
    mkdir -p "$dir" && rm -f "$dir/cove.conn" "$dir/server.pid" "$dir/server.log"
    launch=() as_root=()
    [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)  # cove-server refuses root otherwise
    if [ "${COVE_TEST_SERVERS:-1}" -gt 1 ]; then
      # --enable-recovery: when one member dies, the others serve on.
      launch=(mpiexec --allow-run-as-root --oversubscribe --enable-recovery -n "$COVE_TEST_SERVERS")
    fi
    "${launch[@]}" "$COVE_BIN"/cove-server --connection-file "$dir/cove.conn" "${as_root[@]}" "$@" > "$dir/server.log" 2>&1 &
    echo $! > "$dir/server.pid"
    for _ in $(seq 200); do
      if [ -f "$dir/cove.conn" ]; then
        # A group: its Open MPI job id (from a member's environment), for
        # removing the job's shared-memory segments if it has to be killed.
        for m in $(members "$dir"); do
          job=$(tr '\0' '\n' < "/proc/$m/environ" 2>/dev/null | sed -n 's/^OMPI_MCA_ess_base_jobid=//p')
          [ -z "$job" ] || { echo "$job" > "$dir/server.mpijob"; break; }
        done
        exit 0
      fi
      kill -0 "$(cat "$dir/server.pid")" 2>/dev/null || { cat "$dir/server.log"; exit 1; }
      sleep 0.05
    done
    echo "server did not write $dir/cove.conn"; cat "$dir/server.log"; exit 1 ;;
  stop)
    pid=$(cat "$dir/server.pid" 2>/dev/null || true)
    members=$(members "$dir")
    job=$(cat "$dir/server.mpijob" 2>/dev/null || true)
    # A wedged server may never answer: cove stop is given 10 s.
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ -f "$dir/cove.conn" ]; then
      timeout 10 "$COVE_BIN"/cove stop --connect "$dir/cove.conn" > /dev/null 2>&1 || true
    fi
    for _ in $(seq 100); do
      [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null && break
      sleep 0.05
    done
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; sleep 1; kill -KILL "$pid" 2>/dev/null || true; fi
    # mpiexec killed (or a member it lost track of) can leave members running.
    member_alive() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = cove-server ]; }
    for m in $members; do
      for _ in $(seq 40); do member_alive "$m" || break; sleep 0.05; done
      if member_alive "$m"; then
        echo "server.sh: cove-server $m outlived its launcher: killed" >&2
        kill -KILL "$m" 2>/dev/null || true
        for _ in $(seq 40); do member_alive "$m" || break; sleep 0.05; done
      fi
    done
    # Members killed leave their job's Open MPI shared-memory segments
    # (/dev/shm/vader_segment.HOST.UID.JOB.RANK): removed once none is left.
    left=0
    for m in $members; do member_alive "$m" && left=1; done
    if [ -n "$job" ] && [ $left -eq 0 ]; then rm -f /dev/shm/vader_segment.*."$(printf %x "$job")".*; fi
    rm -rf "$dir" ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac
