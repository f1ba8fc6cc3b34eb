#!/usr/bin/env bash
# Downloads a Debian source package into DIR with a private apt
# configuration under DIR (the system's is not changed): the mirror is the
# one this machine's apt sources give for bookworm, and the only entry is a
# deb-src line for RELEASE. Used by scripts/setup-hdf5.sh (trixie's hdf5)
# and tests/conformance/pnetcdf.sh (bookworm's pnetcdf).
#
# Usage: scripts/fetch-debian-source.sh RELEASE DIR PACKAGE...
#   PACKAGE: a name or name=version; the first one apt can fetch is taken.
# Exits 1, saying why on stderr, when no mirror is known or nothing fetched.
set -euo pipefail
release=${1:?usage: fetch-debian-source.sh RELEASE DIR PACKAGE...}
dir=${2:?usage: fetch-debian-source.sh RELEASE DIR PACKAGE...}
shift 2
[ $# -gt 0 ] || { echo "fetch-debian-source: name a package" >&2; exit 1; }
dir=$(mkdir -p "$dir" && cd "$dir" && pwd)

mirror=""
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  # deb822 stanzas: the first URIs of a stanza that carries Debian's main suite.
  mirror=$(awk '/^URIs:/{u=$2} /^Suites:/ && /bookworm( |$)/{print u; exit}' "$f")
  [ -n "$mirror" ] && break
done
if [ -z "$mirror" ] && [ -f /etc/apt/sources.list ]; then
  mirror=$(awk '$1=="deb" && $3 ~ /^bookworm$/ {print $2; exit}' /etc/apt/sources.list)
fi
[ -n "$mirror" ] || { echo "fetch-debian-source: no Debian mirror for bookworm in /etc/apt/sources*" >&2; exit 1; }

mkdir -p "$dir/apt/lists/partial" "$dir/apt/archives/partial"
echo "deb-src $mirror $release main" > "$dir/apt/sources.list"
apt_opts=(-o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o Dir::Etc::sourceparts=-
          -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache::archives=$dir/apt/archives"
          -o APT::Sandbox::User=root -qq)
apt-get "${apt_opts[@]}" update || { echo "fetch-debian-source: apt-get update failed" >&2; exit 1; }
for package in "$@"; do
  (cd "$dir" && apt-get "${apt_opts[@]}" --download-only source "$package" > /dev/null 2>&1) && exit 0
done
echo "fetch-debian-source: none of $* could be fetched from $release" >&2
exit 1
