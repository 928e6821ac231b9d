#!/usr/bin/env bash
# The H200 campaign of issue #16, as one command per device call, from the repository root:
#
#   WHEELS=.whl/call-1 bash benchmarks/gpu/run_campaign.sh stash   # carry .whl/call-1 (part-0): stash only
#   WHEELS=.whl/call-2 bash benchmarks/gpu/run_campaign.sh PHASE   # next call, warm: carry .whl/call-2
#   bash benchmarks/gpu/run_campaign.sh base       # changes without flash-attn 4 (batch, optimizer, compile, graphs)
#   bash benchmarks/gpu/run_campaign.sh fa4        # flash-attn 4: kernels, audit, sandwich, final measurement
#   bash benchmarks/gpu/run_campaign.sh h27        # issue #27, from flash-attn 4, compiled blocks, batch 8:
#                                                  # attention timing, profile, bf16 weight copy, batch 12,
#                                                  # cuDNN cross-attention, final measurement
#   bash benchmarks/gpu/run_campaign.sh h28 --deadline-s 480   # issue #27, second round, from batch 12 with the
#                                                  # bf16 weight copy: fused q/k/v projections, pointwise-
#                                                  # autotuned compile, max-autotune (each only if it fits)
#   bash benchmarks/gpu/run_campaign.sh h29 --deadline-s 540   # issue #27, third round, from h27's configuration
#                                                  # with flash-attn 4: pointwise-autotuned compile, then
#                                                  # max-autotune if it fits; the configuration reached
#                                                  # timed again either way (the stopping point's re-gate)
#   bash benchmarks/gpu/run_campaign.sh h29 --only batch16,batch14   # issue #27, fifth round: the batch past 12,
#                                                  # then the re-gate (`--only ,` runs the re-gate alone; its
#                                                  # arm samples the environment under load itself)
#   bash benchmarks/gpu/run_campaign.sh h30 --deadline-s 540   # issue #27, sixth round, from h29's configuration:
#                                                  # host-bound attention timing, one profiled step (idle time,
#                                                  # attention fwd/bwd), the optimizer overlapped with the
#                                                  # backward, cuDNN cross-attention again, then the re-gate;
#                                                  # health from NVML read every 0.5 s through every timed arm
#   bash benchmarks/gpu/run_campaign.sh h31 --deadline-s 540   # issue #27, seventh round, from h30's configuration:
#                                                  # the FFN's GEMMs timed cuBLAS against quack, then the FFN's
#                                                  # tanh-GELU and its derivative in quack GEMMs' epilogues
#                                                  # (ffn-quack), then the re-gate (quack ships with flash-attn 4)
#
# WHEELS (default .whl) is the part of what benchmarks/gpu/fetch_wheels.sh wrote that this call
# carries (.whl/call-1, then .whl/call-2); install_wheels.sh stashes what arrives in /tmp and installs flash-attn 4
# once every part is there, so the calls must follow each other while the machine is warm.
# Writes campaign-PHASE.json and stdout.txt into $OUT (default benchmarks/out/campaign);
# add them here with  python benchmarks/gpu/add_campaign.py $OUT ... (see that script).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${OUT:-$ROOT/benchmarks/out/campaign}"
PHASE="${1:-base}"; shift || true
mkdir -p "$OUT"
# shellcheck source=/dev/null
source "$ROOT/benchmarks/gpu/install_wheels.sh" "${WHEELS:-$ROOT/.whl}"
[ "$PHASE" = stash ] && exit 0
if [ "$PHASE" != base ] && [ "$FA4_READY" != 1 ]; then
  echo "flash-attn 4 is not installed on this machine (a part is missing): the $PHASE phase records FA4 as failed"
fi
# Phases h27 to h31 step at batch 8 and 12 in one process: expandable segments keep the caching
# allocator's blocks from fragmenting between the arms (every arm of a sandwich runs under it).
case "$PHASE" in h27|h28|h29|h30|h31) export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF:-expandable_segments:True}";; esac
echo "commit $(git -C "$ROOT" log -1 --format=%h 2>/dev/null || echo unknown)"
# The device's copy of the tree may carry stale git history: the driver files' sha256 say which commit ran.
(cd "$ROOT" && sha256sum benchmarks/gpu/*.py benchmarks/gpu/*.sh src/ledger/collectors/flash.py \
  src/ledger/collectors/timer.py > "$OUT/driver-sha256.txt") || true
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv || true
python3 "$ROOT/benchmarks/gpu/campaign.py" --phase "$PHASE" --out "$OUT" "$@" 2>&1 | tee "$OUT/stdout-$PHASE.txt"
