#!/usr/bin/env bash
# The device tests (docs/gpu.md): the reassembly kernel on the GPU, then a
# 2 -> 3 exchange of a 3-D float64 array through a real cove-server for
# every sender path x receiver path, put and put_local, and the mixed
# pairs (host writer with device readers, device writer with host
# readers), every element checked; overlapping puts and a sealed version's
# fill read into device memory by each receiver path; and device memory
# refused where Cove may not use CUDA (COVE_CUDA=0); Python device arrays
# (python_device.py) where the package imports. Exits 77 (skipped,
# saying why) where no GPU is visible.
#   run.sh BIN_DIR TESTS_DIR
set -euo pipefail
export COVE_BIN=$1
check=$2/cove-gpu-check
here=$(cd "$(dirname "$0")/../integration" && pwd)
dir=$(mktemp -d /tmp/cove-gpu-XXXXXX)

set +e
"$check" kernel
rc=$?
set -e
[ "$rc" -eq 77 ] && { rm -rf "$dir"; exit 77; }
[ "$rc" -eq 0 ] || { rm -rf "$dir"; echo "FAILED: the reassembly kernel"; exit 1; }

source "$here/harness.sh"
"$here"/server.sh start "$dir" --transport local
conn=$dir/cove.conn
writers=2 readers=3 failed=0 n=0

# One exchange: NAME OP WRITER_MEM READER_MEM SEND RECV LAYOUT
exchange() {
  local var=$1 op=$2 wmem=$3 rmem=$4 send=$5 recv=$6 layout=$7 pids=() rc=0
  n=$((n + 1))
  for r in $(seq 0 $((writers - 1))); do
    COVE_GPU_SEND=$send "$check" write --connect "$conn" --var "$var" --rank "$r" --ranks $writers --versions 3 \
      --mem "$wmem" --op "$op" --readers $readers > "$dir/$var.w$r.log" 2>&1 &
    pids+=($!)
    started+=($!)
  done
  for r in $(seq 0 $((readers - 1))); do
    COVE_GPU_RECV=$recv "$check" read --connect "$conn" --var "$var" --rank "$r" --ranks $readers --versions 3 \
      --mem "$rmem" --layout "$layout" > "$dir/$var.r$r.log" 2>&1 &
    pids+=($!)
    started+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  if [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    echo "FAILED: $op, writers in $wmem memory ($send), readers in $rmem memory ($recv), layout $layout"
    cat "$dir/$var".*.log
  else
    echo "ok: $op, writers in $wmem memory ($send), readers in $rmem memory ($recv), layout $layout"
  fi
}

layouts=(C F)
for send in baseline pipeline direct; do
  for recv in baseline hybrid direct; do
    exchange "put-$send-$recv" put device device $send $recv "${layouts[$((n % 2))]}"
  done
done
for send in baseline direct; do
  for recv in baseline hybrid direct; do
    exchange "local-$send-$recv" put_local device device $send $recv "${layouts[$((n % 2))]}"
  done
done
exchange host-to-device put host device automatic direct F
exchange host-to-device-hybrid put host device automatic hybrid C
exchange device-to-host put device host direct automatic F
exchange local-device-to-host put_local device host direct automatic C
# The store's promises into device memory: overlapping puts (the last
# wins) and a sealed version's fill, for every receiver path.
for recv in baseline hybrid direct; do
  n=$((n + 1))
  if COVE_GPU_RECV=$recv "$check" semantics --connect "$conn" --var "semantics-$recv" > "$dir/semantics-$recv.log" 2>&1; then
    echo "ok: overlapping puts and a sealed version's fill into device memory ($recv)"
  else
    failed=$((failed + 1))
    echo "FAILED: overlapping puts and a sealed version's fill into device memory ($recv)"
    cat "$dir/semantics-$recv.log"
  fi
done
n=$((n + 1))
if COVE_CUDA=0 "$check" refuse --connect "$conn" --var refused > "$dir/refuse.log" 2>&1; then
  echo "ok: device memory refused where Cove may not use CUDA (COVE_CUDA=0)"
else
  failed=$((failed + 1))
  echo "FAILED: device memory where Cove may not use CUDA (COVE_CUDA=0)"
  cat "$dir/refuse.log"
fi
# Python device arrays (__cuda_array_interface__), where the package
# imports: COVE_PYTHONPATH is where it is, COVE_PYTHON the interpreter
# (default python3; bench/gpu.sh sets both).
python=${COVE_PYTHON:-python3}
if [ -n "${COVE_PYTHONPATH:-}" ] && command -v "$python" > /dev/null; then
  set +e
  PYTHONPATH=$COVE_PYTHONPATH "$python" "$(dirname "$0")/python_device.py" "$conn" > "$dir/python.log" 2>&1
  rc=$?
  set -e
  cat "$dir/python.log"
  n=$((n + 1))
  if [ $rc -eq 77 ]; then
    n=$((n - 1))
  elif [ $rc -ne 0 ]; then
    failed=$((failed + 1))
    echo "FAILED: Python device arrays"
  fi
fi
echo "$n checks, $failed failed"
[ $failed -eq 0 ]
