#!/usr/bin/env bash
# Runs every libFuzzer target: the wire decoder, each message type's
# decoders (one run per type), and the server's dispatch. Each starts from
# a copy of its corpus in fuzz/corpus (the committed seeds are not changed)
# and prints one line: executions, coverage, and the result.
#   fuzz/run.sh BUILD --runs N       N inputs each (make test: 10^4)
#   fuzz/run.sh BUILD --seconds S    S seconds each (make fuzz)
# FUZZ_ONLY="wire messages.put ..." runs only the targets it names.
# Exit status 1 if any target found a crash, a sanitizer report, a leak or
# a hang (the input is left in BUILD/fuzz-work/<target>/crash-*).
set -euo pipefail
cd "$(dirname "$0")/.."
build=$1 mode=$2 amount=$3
case "$mode" in
  --runs) limit=(-runs="$amount") ;;
  --seconds) limit=(-max_total_time="$amount") ;;
  *) echo "usage: $0 BUILD --runs N | --seconds S" >&2; exit 2 ;;
esac
work=$build/fuzz-work
mkdir -p "$work"
failed=0
printf '%-24s %14s %10s %8s\n' target executions coverage result
# run NAME BINARY CORPUS [VAR=VALUE...]
run() {
  local name=$1 bin=$2 seeds=$3
  shift 3
  if [ -n "${FUZZ_ONLY:-}" ] && [[ " $FUZZ_ONLY " != *" $name "* ]]; then return 0; fi
  local dir=$work/$name
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp -r "$seeds"/. "$dir/corpus/"
  local status=0
  (cd "$dir" && env "$@" timeout $((${amount} * 2 + 600)) "$bin" "${limit[@]}" -timeout=10 -rss_limit_mb=4096 \
     -print_final_stats=1 corpus > log 2>&1) || status=$?
  local execs cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  cov=$(grep -ao 'cov: [0-9]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  local result=ok
  if [ $status -ne 0 ]; then result=FAILED; failed=1; fi
  printf '%-24s %14s %10s %8s\n' "$name" "${execs:-?}" "${cov:-?}" "$result"
  if [ $status -ne 0 ]; then grep -a -m5 -E 'ERROR|SUMMARY|deadly|timeout' "$dir/log" || tail -5 "$dir/log"; fi
}
bins=$(cd "$build/fuzz" && pwd)
run wire "$bins/cove-fuzz-wire" fuzz/corpus/wire
for op in $(ls fuzz/corpus/messages); do
  run "messages.$op" "$bins/cove-fuzz-messages" "fuzz/corpus/messages/$op" COVE_FUZZ_OP="$op"
done
run dispatch "$bins/cove-fuzz-dispatch" fuzz/corpus/dispatch COVE_LOG_LEVEL=off
exit $failed
