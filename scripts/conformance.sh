#!/usr/bin/env bash
# make conformance: the front ends against their native libraries' own test
# suites (docs/hdf5.md, docs/pnetcdf.md). Runs every tests/conformance/*.sh
# with BUILD and a rows file of its own, then prints one table of all rows.
#
# A suite script is called as   SCRIPT BUILD ROWS
# and appends one tab-separated line per run to ROWS:
#   suite  run  passed  of  target  verdict
# e.g. "h5py	memory mode	570	585	>= 97% of native	met". It prints its own
# progress to stderr and exits non-zero only when it could not run at all.
#
# Usage: scripts/conformance.sh BUILD [SUITE...]   (SUITE: a script's name
# without .sh, e.g. hdf5; default all)
set -uo pipefail
build=${1:?usage: conformance.sh BUILD [SUITE...]}
shift
here="$(cd "$(dirname "$0")/.." && pwd)"
out="$build/conformance"
mkdir -p "$out"
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
  for s in "$here"/tests/conformance/*.sh; do
    [ -e "$s" ] && suites+=("$(basename "$s" .sh)")
  done
fi
[ ${#suites[@]} -gt 0 ] || { echo "conformance: no suites in tests/conformance" >&2; exit 1; }

status=0
rows="$out/all.rows"
: > "$rows"
for s in "${suites[@]}"; do
  script="$here/tests/conformance/$s.sh"
  [ -x "$script" ] || { echo "conformance: no suite $s ($script)" >&2; status=1; continue; }
  : > "$out/$s.rows"
  echo "conformance: $s" >&2
  if ! bash "$script" "$build" "$out/$s.rows"; then
    echo "conformance: suite $s could not run" >&2
    printf '%s\t%s\t-\t-\t-\tcould not run\n' "$s" "-" >> "$out/$s.rows"
    status=1
  fi
  cat "$out/$s.rows" >> "$rows"
done

printf '\n%-12s %-44s %8s %6s %-24s %s\n' suite run passed of target verdict
printf '%s\n' "$(printf '%.0s-' {1..110})"
while IFS=$'\t' read -r suite run passed of target verdict; do
  printf '%-12s %-44s %8s %6s %-24s %s\n' "$suite" "$run" "$passed" "$of" "$target" "$verdict"
done < "$rows"
exit $status
