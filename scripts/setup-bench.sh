#!/usr/bin/env bash
# Installs the optional baselines of the comparison benchmark
# (bench/compare.py, `make bench`): parallel HDF5 and UCX's ucx_perftest
# (bench/network.py) from Debian's packages, and
# a Python virtual environment under the build folder with ADIOS2 (its wheel
# carries C++ headers, a CMake package and the libraries, built without MPI)
# and matplotlib for the plots. Nothing else needs these: the library, its
# tests and `make test` build and pass without them.
#
# Every step is optional: one that fails prints why and the benchmark later
# reports that method as skipped. Idempotent; prints nothing when all is there.
#   setup-bench.sh [BUILD_DIR]          (default: build)
set -uo pipefail
build=${1:-build}
venv=$build/bench-venv

# Parallel HDF5 (MPI-IO), built against Debian's OpenMPI.
if ! dpkg-query -W -f='${Status}' libhdf5-openmpi-dev 2>/dev/null | grep -q "install ok installed"; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo > /dev/null 2>&1 && sudo="sudo"
  echo "setup-bench: installing libhdf5-openmpi-dev (parallel HDF5 baseline)"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends libhdf5-openmpi-dev > /dev/null; }; then
    echo "setup-bench: could not install libhdf5-openmpi-dev; the HDF5 baseline will be skipped" >&2
  fi
fi

# UCX's own ucx_perftest, a baseline of the network benchmark (bench/network.py).
if ! command -v ucx_perftest > /dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && command -v sudo > /dev/null 2>&1 && sudo="sudo"
  echo "setup-bench: installing ucx-utils (ucx_perftest, network baseline)"
  if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends ucx-utils > /dev/null; }; then
    echo "setup-bench: could not install ucx-utils; the ucx_perftest rows will be skipped" >&2
  fi
fi

# ADIOS2 (SST engine) and matplotlib in a venv of the build folder.
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$build"
  python3 -m venv "$venv" > /dev/null || { echo "setup-bench: python3 -m venv failed; no ADIOS2 baseline, CSV only" >&2; exit 0; }
fi
want=()
"$venv/bin/python" -c "import adios2" 2> /dev/null || want+=(adios2)
"$venv/bin/python" -c "import matplotlib" 2> /dev/null || want+=(matplotlib)
if [ ${#want[@]} -gt 0 ]; then
  echo "setup-bench: pip install ${want[*]} into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}" ||
    echo "setup-bench: pip install failed; the benchmark reports what is missing" >&2
fi
exit 0
