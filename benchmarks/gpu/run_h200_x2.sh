#!/usr/bin/env bash
# Two H200s of one host (device kind nvidia-h200-x2), as one command from the repository root:
#   bash benchmarks/gpu/run_h200_x2.sh     (carry: .whl)
# 1. the single-GPU run of run_h200.sh on GPU 0 (environment of both GPUs, health, ceiling,
#    reference workload); 2. StepTimer across 2 NCCL ranks (nccl_slowest_rank.py).
# Everything lands in one archive, $OUT/results.tar.gz, for benchmarks/gpu/add_records.py.
set -euo pipefail
OUT="${OUT:-benchmarks/out/h200x2}"
WORK=$(mktemp -d)
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv || true
OUT="$WORK/single" bash benchmarks/gpu/run_h200.sh 2>&1 | tail -40
torchrun --standalone --nproc-per-node 2 benchmarks/gpu/nccl_slowest_rank.py --out "$WORK/nccl" 2>&1 | tee "$WORK/nccl.log"
mkdir -p "$OUT"
tar -C "$WORK" -czf "$OUT/results.tar.gz" .
ls -la "$OUT"
