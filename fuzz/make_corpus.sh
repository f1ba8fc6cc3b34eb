#!/usr/bin/env bash
# Seeds the fuzzers' corpora (fuzz/corpus/) from real traffic: the staging
# unit tests run with COVE_RECORD_REQUESTS, which writes every request a
# server of theirs receives to a file; up to 8 small ones of each message
# type are kept.
#   fuzz/make_corpus.sh [BUILD]     (BUILD: a normal build, default build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# In-process, and between processes over the local transport (grants).
for transport in inproc local; do
  COVE_RECORD_REQUESTS=$tmp COVE_TEST_TRANSPORT=$transport COVE_LOG_LEVEL=error \
    "$build"/tests/cove-unit-tests --gtest_filter='Staging*:*NToM*:Group*:Replicas*:Semantics*' > /dev/null
done
rm -rf fuzz/corpus
mkdir -p fuzz/corpus/wire fuzz/corpus/dispatch
for f in $(ls "$tmp" | sort -t- -k3 -n); do
  op=${f%%-*}
  [ "$op" != unknown ] || continue
  size=$(stat -c %s "$tmp/$f")
  [ "$size" -le 2048 ] || continue
  mkdir -p "fuzz/corpus/messages/$op"
  [ "$(ls "fuzz/corpus/messages/$op" | wc -l)" -lt 8 ] || continue
  n=$(ls "fuzz/corpus/messages/$op" | wc -l)
  cp "$tmp/$f" "fuzz/corpus/dispatch/$op-$n"
  cp "$tmp/$f" "fuzz/corpus/wire/$op-$n"
  tail -c +25 "$tmp/$f" > "fuzz/corpus/messages/$op/$n"  # the body: after the 24-byte header
done
echo "corpus: $(find fuzz/corpus -type f | wc -l) files, from $(ls "$tmp" | wc -l) recorded requests"
