#!/usr/bin/env bash
# The H200 run of issue #5, as one command from the repository root on the GPU machine:
#   bash benchmarks/gpu/run_h200.sh        (carry: .whl, the wheels of pydantic & co.)
# Writes record bodies and logs into $OUT (default benchmarks/out/h200); add them here with
#   python benchmarks/gpu/add_records.py DIR --ledger . --source-sha SHA
set -euo pipefail
OUT="${OUT:-benchmarks/out/h200}"
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
# Multicast stays off on shared hosts (KINDS.md); the driver records these flags.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv || true
python3 benchmarks/gpu/run_h200.py --out "$OUT" "$@" 2>&1 | tee "$OUT/stdout.txt"
