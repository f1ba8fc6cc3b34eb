#!/usr/bin/env bash
# Builds and runs every device test and the GPU benchmark, and prints the
# benchmark's tables (docs/gpu.md). Run it on a machine with an NVIDIA GPU
# and the CUDA toolkit:
#
#   bench/gpu.sh [BENCH OPTIONS]
#       set up (scripts/setup.sh), build in build-gpu, run the device tests
#       (ctest -L gpu) and cove-gpu-bench
#   bench/gpu.sh --bundle DIR
#       on a machine without a GPU: copy the GPU test and bench programs of
#       build-gpu (built first), cove-server and the libraries they load into
#       DIR, for a GPU machine that cannot install packages
#   bench/gpu.sh --prebuilt DIR [BENCH OPTIONS]
#       on such a GPU machine: the same tests and benchmark from DIR
#
# BENCH OPTIONS go to cove-gpu-bench (--sizes 8,64,256,1024 --reps 5).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${COVE_GPU_BUILD:-$root/build-gpu}

build_it() {
  bash "$root/scripts/setup.sh"
  cmake -S "$root" -B "$build" -G Ninja --log-level=WARNING -DCMAKE_BUILD_TYPE=Release -DCOVE_ENABLE_CUDA=ON
  cmake --build "$build" -j "$(nproc)" --target cove_tool cove_cuda cove-gpu-check cove-gpu-bench
}

run_all() {  # BIN_DIR CHECK_DIR BENCH [BENCH OPTIONS]
  local bin=$1 check=$2 bench=$3
  shift 3
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true
  echo "== device tests"
  bash "$root/tests/gpu/run.sh" "$bin" "$check"
  echo "== benchmark"
  "$bench" --server "$bin/cove-server" "$@"
}

case "${1:-}" in
  --bundle)
    dir=$2
    build_it
    rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib"
    cp "$build/tools/cove" "$build/tests/cove-gpu-check" "$build/bench/cove-gpu-bench" "$dir/bin/"
    ln -s cove "$dir/bin/cove-server"
    cp "$build/src/libcove-cuda.so" "$dir/lib/"
    # Every library they load but the C library's own and the CUDA driver.
    for f in "$dir"/bin/cove "$dir"/bin/cove-gpu-check "$dir"/bin/cove-gpu-bench; do
      ldd "$f" | awk '$3 ~ /^\// {print $3}'
    done | sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libcuda)\.so' |
      while read -r lib; do cp -L "$lib" "$dir/lib/"; done
    du -sh "$dir" ;;
  --prebuilt)
    dir=$(cd "$2" && pwd)
    shift 2
    export LD_LIBRARY_PATH=$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export COVE_CUDA_PLUGIN=$dir/lib/libcove-cuda.so
    run_all "$dir/bin" "$dir/bin" "$dir/bin/cove-gpu-bench" "$@" ;;
  *)
    build_it
    run_all "$build/tools" "$build/tests" "$build/bench/cove-gpu-bench" "$@" ;;
esac
