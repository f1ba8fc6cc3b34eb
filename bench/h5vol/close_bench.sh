#!/usr/bin/env bash
# H5Fclose on the producer, alone and while a slow consumer reads (each
# version held open 200 ms), through the Cove VOL connector and a
# cove-server. Prints both means and their ratio; LowFive's producer would
# wait for the consumer here.
#   bench/h5vol/close_bench.sh [BUILD] [STEPS] [MIB]
set -euo pipefail
build=$(cd "${1:-build}" && pwd) steps=${2:-10} mib=${3:-16}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "$build/h5vol-close.XXXXXX")
export COVE_BIN=$build/tools
trap 'bash "$here/../../tests/integration/server.sh" stop "$work/server"; rm -rf "$work"' EXIT
mpi=(mpiexec --allow-run-as-root --oversubscribe --bind-to none)
export HDF5_PLUGIN_PATH=$build/h5vol-plugin HDF5_VOL_CONNECTOR=cove
prog=$build/bench/cove-h5vol-close-bench

run() {  # run NAME [consumer]
  bash "$here/../../tests/integration/server.sh" start "$work/server"
  export COVE_CONNECT=$work/server/cove.conn
  local cpid=""
  if [ "${2:-}" = consumer ]; then
    "${mpi[@]}" -n 1 "$prog" consumer "$1.h5" "$steps" 200 > "$work/consumer.log" 2>&1 &
    cpid=$!
  fi
  (cd "$work" && "${mpi[@]}" -n 2 "$prog" producer "$1.h5" "$steps" "$mib") | tee "$work/$1.out"
  [ -z "$cpid" ] || wait "$cpid" || { cat "$work/consumer.log"; exit 1; }
  [ -z "$cpid" ] || cat "$work/consumer.log"
  bash "$here/../../tests/integration/server.sh" stop "$work/server"
}
echo "== producer alone ($steps versions of $mib MiB from 2 ranks)"
run alone
echo "== producer while a consumer holds each version 200 ms"
run slow consumer
a=$(awk '{print $3}' "$work/alone.out") b=$(awk '{print $3}' "$work/slow.out")
c=$(awk '{print $6}' "$work/slow.out")
awk -v a="$a" -v b="$b" -v c="$c" 'BEGIN {
  printf "H5Fclose with a slow consumer / alone: %.2f (1.00: independent of the consumer)\n", b / a
  printf "slowest H5Fclose beside the consumer: %.1f ms; a producer that waited for it would spend >= 200 ms per step\n", c * 1000 }'
