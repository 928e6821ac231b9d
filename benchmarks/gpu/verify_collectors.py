"""The collectors' GPU paths after issue #27's sixth round, on one H200 (run from the repository root):

    python3 benchmarks/gpu/verify_collectors.py --out "$OUT"      # after install_wheels.sh (flash-attn 4)

- `benchmark_attention` (what `ledger collect attention` runs), now timing calls queued behind
  a GPU spin: flash-attn 4 and SDPA cuDNN at the workload's cross-attention (B2, 4,290 x 1,024)
  and self-attention (B2, 4,290 x 4,290) shapes, `--runs` times each, so the spread between
  runs is measured (the question was 389 against 582 TFLOP/s in two runs);
- `sample_under_load` (what `ledger collect env --load` runs), now judging a series of NVML
  readings;
- `measure_ceiling`, unchanged, beside them.

Writes verify-collectors.json into --out (record bodies for `ledger add`, and a table on stdout).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from ledger.collectors.attention import benchmark_attention
from ledger.collectors.ceiling import measure_ceiling
from ledger.collectors.environment import sample_under_load


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    result: dict = {"attention": [], "runs": args.runs}
    result["environment_load"] = sample_under_load()
    print(f"environment under load: {result['environment_load']['health']}", flush=True)
    result["ceiling"] = measure_ceiling("cuda", repeats=30)
    print(f"ceiling: {result['ceiling']['title']}", flush=True)
    for run in range(1, args.runs + 1):
        for seq_k in (1024, 4290):
            records = benchmark_attention(
                batch=2,
                seq_q=4290,
                seq_k=seq_k,
                heads=32,
                head_dim=128,
                backends=["flash-attn-4", "cudnn"],
                repeats=args.repeats,
            )
            for rec in records:
                rec.setdefault("extra", {})["run"] = run
                result["attention"].append(rec)
                if rec.get("samples"):
                    s = rec["samples"]
                    print(
                        f"run {run} {rec['title']}: median {statistics.median(s):.0f} TFLOP/s "
                        f"(range {min(s):.0f}-{max(s):.0f})",
                        flush=True,
                    )
                else:
                    print(f"run {run} {rec.get('title')}: {rec.get('notes', '')[:200]}", flush=True)
    result["seconds"] = time.perf_counter() - t0
    (args.out / "verify-collectors.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"driver {result['seconds']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
