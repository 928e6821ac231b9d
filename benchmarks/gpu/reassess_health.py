"""Correct environment records whose health verdict an earlier rule got wrong.

    python benchmarks/gpu/reassess_health.py ENV_ID... --ledger . [--dry-run]

Nothing is edited: for each environment whose verdict changes under this checkout's
`assess_health`, a corrected environment record is added that supersedes it, and so is
a corrected copy of every measurement that points at it and carried its verdict. The
raw GPU readings and samples are copied as measured; only the verdict and its reasons change.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from ledger.collectors.environment import assess_health
from ledger.schema.envelope import GENERATED_FIELDS
from ledger.store import Item, Ledger, Stamping, add


def body_of(record) -> dict:
    data = record.model_dump(mode="json", exclude_none=True)
    return {k: v for k, v in data.items() if k not in GENERATED_FIELDS and k != "kind"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="+")
    ap.add_argument("--ledger", default=".")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    book = Ledger.open(args.ledger)
    measurements = book.records("measurement")
    for env_id in args.ids:
        env = book.get(env_id)
        verdict = assess_health([g.model_dump(mode="json", exclude_none=True) for g in env.gpus], bool(env.under_load))
        if verdict["verdict"] == env.health.verdict:
            print(f"{env.id}: still {env.health.verdict}; nothing to correct")
            continue
        note = f"re-assessed by the corrected health rule (was {env.health.verdict}: {'; '.join(env.health.reasons)})"
        verdict["reasons"].append(note)
        # The stamps are the original run's: the correction is about that run.
        stamping = Stamping(source=env.source, allocation=env.allocation)
        fixed_env = {**body_of(env), "health": verdict, "supersedes": [env.id]}
        print(f"{env.id}: {env.health.verdict} -> {verdict['verdict']}")
        if args.dry_run:
            continue
        (new_env,) = add(book, "environment", [Item(fixed_env, env.id, None)], stamping)
        print("environment", new_env.id)
        for m in measurements:
            if m.environment == env.id and m.health == env.health.verdict:
                fixed = {
                    **body_of(m),
                    "environment": new_env.id,
                    "health": verdict["verdict"],
                    "health_reasons": verdict["reasons"],
                    "supersedes": [m.id],
                }
                (new_m,) = add(
                    book, "measurement", [Item(fixed, m.id, None)], Stamping(source=m.source, allocation=m.allocation)
                )
                print("measurement", new_m.id, "supersedes", m.id)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
