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
