#!/usr/bin/env bash
# Installs everything Cove's build, tests and benchmarks need from Debian's
# packages. Idempotent: when all is present it installs nothing and prints
# nothing. Needs root or sudo only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config  # compilers and build tools
  googletest libgtest-dev libbenchmark-dev             # tests and benchmarks
  openmpi-bin libopenmpi-dev                           # MPI: server groups, coupled jobs
  libucx-dev                                           # UCX: the real transport
  libtomlplusplus-dev                                  # TOML: server configuration, connection files
  libspdlog-dev libfmt-dev                             # logging and formatting
  libcli11-dev                                         # command-line options of the programs
  libsodium-dev                                        # random names and nonces, group proofs (HMAC)
  nlohmann-json3-dev                                   # cove stat/ls --json
  clang libclang-rt-14-dev                             # libFuzzer: the fuzz targets (make fuzz, make test)
  util-linux                                           # setpriv, unshare, nsenter: a test as another user, hosts as namespaces
  iproute2                                             # ip: network namespaces and veth links (hosts.faults)
  python3
  gfortran                                             # the Fortran module (COVE_ENABLE_FORTRAN)
  libtrilinos-kokkos-dev                               # Kokkos 3.4: the StagingSpace (COVE_ENABLE_KOKKOS)
  python3-dev python3-venv python3-pip                 # the Python package (COVE_ENABLE_PYTHON) and its venv
  python3-numpy python3-mpi4py python3-pytest          # ... its runtime and tests
  python3-matplotlib                                   # ... the Python analysis example's plots
  dpkg-dev zlib1g-dev                                  # HDF5 1.14 from Debian's source package (scripts/setup-hdf5.sh)
  libpnetcdf-dev pnetcdf-bin                           # PnetCDF 1.12: libcove-pnetcdf, ncmpidump/ncmpidiff in its tests
  libmetis-dev                                         # METIS: dataflow-graph affinity for placement
)

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: this script uses Debian's packages; install these by other means: ${packages[*]}" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: missing ${missing[*]}; run as root or install sudo" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
