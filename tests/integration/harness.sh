# Sourced by the integration test scripts (faults.sh, security.sh): the
# processes a test starts, stopped by PID when it exits, with the server in
# $dir; and waits for what a started process announces.
# Needs: dir (the test's folder) and here (this folder).
started=()
cleanup() {
  for p in "${started[@]}"; do kill -KILL "$p" 2> /dev/null || true; done
  "$here"/server.sh stop "$dir"
}
trap cleanup EXIT
# Stopped by a signal (Ctrl-C, a runner's TERM): the EXIT trap still runs.
trap 'exit 130' INT
trap 'exit 143' TERM

# A deadline of the test's own, inside CTest's TIMEOUT (which SIGKILLs,
# leaving no trap to stop anything): a step still running at it fails the
# test, saying which, and the EXIT trap stops what was started.
#   deadline_in SECONDS
deadline_in() { deadline_s=$1 deadline=$((SECONDS + $1)); }

# Says (on stderr) why the test failed at its deadline, then what the
# test's function `diagnose` shows (its processes' output), and exits 1.
missed_deadline() {
  {
    echo "FAIL: $* (the test's deadline of $deadline_s s)"
    if declare -F diagnose > /dev/null; then diagnose || true; fi
  } >&2
  exit 1
}

# Runs COMMAND for at most what is left before the deadline; its status
# is returned, and at the deadline the test fails saying WHAT was running.
#   bounded WHAT COMMAND...
bounded() {
  local what=$1 left=$((deadline - SECONDS)) rc=0
  shift
  [ "$left" -gt 0 ] || missed_deadline "the deadline passed before $what"
  timeout "$left" "$@" || rc=$?
  [ "$rc" -ne 124 ] || missed_deadline "$what was still running"
  return "$rc"
}

# Waits until FILE contains TEXT, up to the deadline (on a loaded machine
# more than wait_for's few seconds); fails at once, with FILE, when the
# started process PID that writes it has exited without writing TEXT.
#   wait_for_bounded FILE TEXT PID
wait_for_bounded() {
  until grep -q "$2" "$1" 2> /dev/null; do
    if ! kill -0 "$3" 2> /dev/null; then
      grep -q "$2" "$1" 2> /dev/null && return 0
      echo "FAIL: pid $3 exited without writing '$2' to $1:"; cat "$1"; exit 1
    fi
    [ "$SECONDS" -lt "$deadline" ] || missed_deadline "'$2' never appeared in $1"
    sleep 0.05
  done
}

# Waits for a started process until the deadline; returns its status.
#   wait_bounded WHAT PID
wait_bounded() {
  local what=$1 pid=$2
  while kill -0 "$pid" 2> /dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || missed_deadline "$what (pid $pid) was still running"
    sleep 0.1
  done
  wait "$pid"
}

# Starts a command in the background with its output in FILE, to be
# stopped at exit; its PID is left in $last.
#   start_bg FILE COMMAND...
start_bg() {
  local out=$1
  shift
  "$@" > "$out" 2>&1 &
  last=$!
  started+=("$last")
}

# SIGKILLs a started process and reaps it.
kill_now() {
  kill -KILL "$1"
  wait "$1" 2> /dev/null || true
}

# Waits until FILE contains TEXT (a process announcing it has started something).
wait_for() {
  for _ in $(seq 600); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.01; done
  echo "timed out waiting for '$2' in $1"; cat "$1"; return 1
}

# Waits until FILE exists (written whole, by rename, by the process that makes it).
wait_for_file() {
  for _ in $(seq 600); do [ -f "$1" ] && return 0; sleep 0.01; done
  echo "timed out waiting for $1"; return 1
}
