#!/usr/bin/env bash
# Multi-host faults on one machine. Three "hosts" are network namespaces,
# each with a pid namespace of its own (so neither the local transport nor
# process_vm_readv reaches across them: only TCP does, Cove's own by
# default, UCX's with COVE_HOSTS_TRANSPORT=ucx), plugged
# into a bridge in a fourth namespace by veth links. A group of two servers
# runs on h1 and h2; writers and readers run on h1, h2 and h3. Then:
#   1. h3's link goes down under a put and under a waiting get: both fail
#      with a clear error within their deadlines, nothing hangs;
#   2. the link comes back: the same writer's puts succeed again, and every
#      version it was told was stored reads back exactly, from another host;
#   3. h1 is killed (every process in its pid namespace, and its network
#      namespace removed): the survivor on h2 serves what it holds, refuses
#      the rest with Unavailable and reports what was lost. (Rank 0 holds
#      the pieces that cross into rank 1's part of the index.)
# Every address is one the test assigns inside namespaces it made, with no
# route out of them: no packet leaves. No latency is modelled (no netem).
#   hosts.sh DIR
# Exit status 77 (skipped) without the rights to make namespaces.
#
# mpiexec runs on a fourth host, h0 (a login node; its network only, so
# that it can still see the other hosts' processes to start them there).
# Its PMIx server listens
# on h0's loopback only, so each rank's launcher (this script again, with
# --rank) relays a port of h0's link to it before entering its host.
set -euo pipefail
here=$(dirname "$0")
if [ "$1" = --rank ]; then
  # hosts.sh --rank INIT IP DIR COMMAND...
  init=$2 ip=$3 rdir=$4
  shift 4
  port=${PMIX_SERVER_URI41##*:}
  python3 "$here/relay.py" "$ip" "$port" "$rdir/relay-$$.port" > /dev/null 2>&1 &
  echo $! >> "$rdir/relays"
  for _ in $(seq 200); do [ -f "$rdir/relay-$$.port" ] && break; sleep 0.02; done
  relayed=$(cat "$rdir/relay-$$.port")
  for v in ${!PMIX_SERVER_URI*}; do export "$v=${!v/127.0.0.1:$port/$ip:$relayed}"; done
  exec nsenter -t "$init" -n -p -m -- "$@"
fi
dir=$1
hosts_bin=$COVE_TEST_BIN/cove-test-hosts
fault_bin=$COVE_FAULT_BIN/cove-test-fault

skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "making network and pid namespaces needs root"
for tool in ip unshare nsenter mpiexec python3; do command -v "$tool" > /dev/null || skip "no $tool"; done

tag=cove$$          # names of this run's namespaces and links
subnet=10.213.0     # addresses inside them
hosts=(h0 h1 h2 h3)
declare -A init=()  # host -> its pid namespace's first process (pid 1 there)
started=()

cleanup() {
  local status=$?
  set +e
  if [ $status -ne 0 ]; then
    for f in "$dir"/*.out "$dir"/*.log; do [ -f "$f" ] && { echo "--- $f"; tail -20 "$f"; }; done
  fi
  for p in "${started[@]}" $(cat "$dir/relays" 2> /dev/null); do kill -KILL "$p" 2> /dev/null; done
  for h in "${!init[@]}"; do kill -KILL "${init[$h]}" 2> /dev/null; done
  wait 2> /dev/null
  for h in "${hosts[@]}" sw; do ip netns del "$tag-$h" 2> /dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT

ip netns add "$tag-sw" 2> /dev/null || skip "cannot make network namespaces here"
ip -n "$tag-sw" link add br0 type bridge
ip -n "$tag-sw" link set br0 up
for h in "${hosts[@]}"; do
  n=${h#h}
  [ "$n" -ne 0 ] || n=100
  ns=$tag-$h
  ip netns add "$ns"
  ip link add "$tag$h" netns "$ns" type veth peer name "$h" netns "$tag-sw"
  ip -n "$ns" link set "$tag$h" name eth0
  ip -n "$ns" addr add "$subnet.$n/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  ip -n "$tag-sw" link set "$h" master br0
  ip -n "$tag-sw" link set "$h" up
  # The host's pid namespace lives as long as its first process.
  ip netns exec "$ns" unshare --pid --fork --mount-proc sleep 100000 2> /dev/null &
  started+=($!)
  for _ in $(seq 200); do
    child=$(cat /proc/$!/task/$!/children 2> /dev/null || true)
    [ -n "$child" ] && break
    sleep 0.01
  done
  [ -n "$child" ] || { echo "the pid namespace of $h did not start"; exit 1; }
  init[$h]=${child%% *}
done
# Runs a command on a host: its network, pid and mount namespaces.
on() {
  local h=$1
  shift
  nsenter -t "${init[$h]}" -n -p -m -- "$@"
}
link() { ip -n "$tag-sw" link set "$1" "$2"; echo "link of $1 $2"; }

mkdir -p "$dir"
export COVE_CONNECT=$dir/cove.conn
# The ranks talk over their hosts' links, as on separate nodes.
export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=eth0
transport=${COVE_HOSTS_TRANSPORT:-tcp}
server=("$COVE_BIN/cove-server" --connection-file "$COVE_CONNECT" --allow-run-as-root --listen eth0 --transport "$transport")
rank() { echo "$(cd "$here" && pwd)/hosts.sh" --rank "${init[$1]}" "$subnet.100" "$dir"; }
nsenter -t "${init[h0]}" -n -- mpiexec --allow-run-as-root --oversubscribe --enable-recovery \
  -n 1 $(rank h1) "${server[@]}" : -n 1 $(rank h2) "${server[@]}" > "$dir/servers.log" 2>&1 &
group=$!
started+=("$group")
for _ in $(seq 300); do
  [ -f "$COVE_CONNECT" ] && break
  kill -0 "$group" 2> /dev/null || { cat "$dir/servers.log"; exit 1; }
  sleep 0.05
done
[ -f "$COVE_CONNECT" ] || { echo "the group did not start"; cat "$dir/servers.log"; exit 1; }
echo "group of 2 on h1 and h2: $(grep -c "$transport:" "$COVE_CONNECT") $transport addresses"

# Waits until FILE contains TEXT, for up to S seconds.
wait_for() {
  for _ in $(seq $(($3 * 20))); do grep -q "$2" "$1" 2> /dev/null && return 0; sleep 0.05; done
  echo "no '$2' in $1 after $3 s"; cat "$1"; return 1
}
# Waits up to S seconds for a started PID; its exit status, or 124.
wait_pid() {
  for _ in $(seq $(($2 * 20))); do kill -0 "$1" 2> /dev/null || { wait "$1"; return $?; }; sleep 0.05; done
  return 124
}

on h1 "$fault_bin" group-seed

# 1. h3's link down under a put and under a waiting get.
on h3 "$hosts_bin" put-loop "$dir/stop" > "$dir/writer.out" 2>&1 &
writer=$!
started+=("$writer")
on h3 "$hosts_bin" wait-get 6000 > "$dir/getter.out" 2>&1 &
getter=$!
started+=("$getter")
wait_for "$dir/writer.out" " ok in" 60
wait_for "$dir/getter.out" waiting 30
sleep 0.2
link h3 down
status=0
wait_pid "$getter" 30 || status=$?
cat "$dir/getter.out"
[ $status -eq 0 ] || { echo "the waiting get did not fail cleanly in time (status $status)"; exit 1; }
wait_for "$dir/writer.out" failed 60
grep failed "$dir/writer.out" | head -1

# 2. The link back: the same writer resumes, and what it stored reads back
#    exactly from another host.
link h3 up
oks=$(grep -c " ok in" "$dir/writer.out")
for _ in $(seq 1200); do
  [ "$(grep -c " ok in" "$dir/writer.out")" -gt "$oks" ] && break
  sleep 0.05
done
if [ "$(grep -c " ok in" "$dir/writer.out")" -le "$oks" ]; then
  echo "puts did not resume; the server, asked from its own host:"
  on h1 timeout 20 "$COVE_BIN"/cove stat || echo "(no answer)"
  on h3 timeout 20 "$COVE_BIN"/cove stat || echo "(no answer from h3)"
  exit 1
fi
echo "puts resumed: $(tail -1 "$dir/writer.out")"
touch "$dir/stop"
status=0
wait_pid "$writer" 60 || status=$?
tail -1 "$dir/writer.out"
[ $status -eq 0 ] || { echo "the writer saw wrong or lost bytes (status $status)"; cat "$dir/writer.out"; exit 1; }
on h2 "$hosts_bin" check
on h1 "$COVE_BIN"/cove undefine stream > /dev/null

# 3. h1 killed with its server: the survivor on h2 serves what it holds.
kill -KILL "${init[h1]}"
unset 'init[h1]'
ip netns del "$tag-h1"
echo "host h1 killed"
# Nothing tells the survivor: no connection was closed, the host is just
# gone. Its watch finds out when the member stops answering, and checks
# with a fresh connection.
killed=$SECONDS
until on h2 "$COVE_BIN"/cove stat 2> /dev/null | grep -q "lost: [1-9]"; do
  [ $((SECONDS - killed)) -lt 60 ] || { echo "the survivor did not notice in 60 s"; on h2 "$COVE_BIN"/cove stat; exit 1; }
  sleep 1
done
echo "the survivor noticed within $((SECONDS - killed)) s"
on h3 "$fault_bin" group-after 0
on h2 "$COVE_BIN"/cove stat | grep -q unreachable || { on h2 "$COVE_BIN"/cove stat; exit 1; }
on h2 "$COVE_BIN"/cove stop > /dev/null
status=0
wait_pid "$group" 30 || status=$?
[ $status -ne 124 ] || { echo "the surviving server did not stop"; cat "$dir/servers.log"; exit 1; }
echo "ok"
