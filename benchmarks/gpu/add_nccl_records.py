"""Add the two-rank NCCL StepTimer result (nccl_slowest_rank.py) to a ledger.

python benchmarks/gpu/add_nccl_records.py DIR --ledger . --source-sha SHA --allocation ID [--environment ID]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from ledger.schema.envelope import Allocation, Source
from ledger.store import Item, Ledger, Stamping, add

CONTRACT = {
    "name": "steptimer-nccl-2x-h200-slowest-rank",
    "model": "bf16 8192^3 matmul per rank per step, one rank spun ~8 ms on chosen steps",
    "compute_precision": "bf16",
    "warmup_steps": 5,
    "measured_steps": 12,
    "statistic": "median",
    "rank_reduction": "slowest-rank",
    "description": "benchmarks/gpu/nccl_slowest_rank.py: proves StepTimer keeps the slowest rank per step across NCCL ranks",
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--ledger", default=".")
    ap.add_argument("--source-sha", required=True)
    ap.add_argument("--allocation", required=True)
    ap.add_argument("--environment", default=None)
    args = ap.parse_args()
    book = Ledger.open(args.ledger)
    body = json.loads((args.folder / "nccl_measurement.json").read_text())
    verdict = json.loads((args.folder / "nccl_verdict.json").read_text())
    if not (verdict["samples_match_max_of_ranks"] and verdict["slowest_rank_matches"]):
        raise SystemExit("the run did not keep the slowest rank per step; not recording it as a pass")
    stamping = Stamping(
        source=Source(sha=args.source_sha),
        allocation=Allocation(id=args.allocation, scheduler="local", topology="2x H200", nodes=1, gpus_per_node=2),
    )
    same = [c for c in book.records("contract") if c.name == CONTRACT["name"]]
    contract = same[0] if same else add(book, "contract", [Item(CONTRACT, "<contract>", None)], stamping)[0]
    audits = [a for a in book.records("flop-audit") if a.contract == contract.id]
    audit = (
        audits[0]
        if audits
        else add(
            book,
            "flop-audit",
            [
                Item(
                    {
                        "contract": contract.id,
                        "title": "one bf16 8192^3 matmul per sample",
                        "flop_per_sample": 2 * 8192**3,
                        "derivation": "2*M*N*K for one 8192x8192 @ 8192x8192 matmul per sample; the spin and the zero-scaled add do no model work",
                        "peak": {
                            "name": "vendor-h200-dense-bf16",
                            "tflops_per_gpu": 989.0,
                            "vendor_tflops_per_gpu": 989.0,
                        },
                    },
                    "<flop-audit>",
                    None,
                )
            ],
            stamping,
        )[0]
    )
    body = {**body, "contract": contract.id, "flop_audit": audit.id}
    if args.environment:
        body["environment"] = args.environment
    (rec,) = add(book, "measurement", [Item(body, "nccl_measurement.json", None)], stamping)
    print(contract.kind, contract.id)
    print(rec.kind, rec.id, rec.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
