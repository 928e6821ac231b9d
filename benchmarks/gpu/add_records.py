"""Add the records run_h200.py wrote to a ledger, linking them by id.

    python benchmarks/gpu/add_records.py FOLDER --ledger /work/main --source-sha SHA

Order: environments, ceiling (-> the under-load environment), contract, flop-audit
(-> contract), measurements (-> contract, environment, flop-audit, ceiling), attention
measurements (-> environment, ceiling). Each kind is validated before it is written.
Prints the ids added.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from ledger.schema.envelope import Source
from ledger.store import Item, Ledger, Stamping, add


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--ledger", default=".")
    ap.add_argument("--source-sha", required=True, help="commit the driver ran from")
    ap.add_argument("--note", default=None, help="text of a note record added beside them (device time, command)")
    ap.add_argument(
        "--reassess-health",
        action="store_true",
        help="judge each environment's health again with this checkout's rule (the raw GPU readings are kept as measured)",
    )
    args = ap.parse_args()
    book = Ledger.open(args.ledger)
    stamping = Stamping(source=Source(sha=args.source_sha))

    def load(name):
        return json.loads((args.folder / name).read_text(encoding="utf-8"))

    envs, ceiling, contract = load("environment.json"), load("ceiling.json"), load("contract.json")
    if args.reassess_health:
        from ledger.collectors.environment import assess_health

        for env in envs:
            verdict = assess_health(env["gpus"], bool(env.get("under_load")))
            if verdict != env["health"]:
                verdict["reasons"].append(
                    f"re-assessed when added (the device judged {env['health']['verdict']}: {'; '.join(env['health']['reasons'])})"
                )
                env["health"] = verdict
        # The workload's measurements carry the under-load environment's verdict.
        load_health = envs[-1]["health"]
        health = {"health": load_health["verdict"], "health_reasons": load_health["reasons"]}
    else:
        health = {}
    audit, measurements, attention = load("flop_audit.json"), load("measurements.json"), load("attention.json")
    measurements = [{**m, **health} if "health" in m else m for m in measurements]
    # Added kind by kind so that each can point at the ids the previous step returned;
    # every `add` validates and checks references before it writes.
    out = add(
        book, "environment", [Item(e, "environment.json", f"record {i + 1}") for i, e in enumerate(envs)], stamping
    )
    load_env = out[-1].id
    ceiling_rec = add(book, "ceiling", [Item({**ceiling, "environment": load_env}, "ceiling.json", None)], stamping)[0]
    # A contract is added once: a later run under the same contract points at the first.
    same = [c for c in book.records("contract") if c.name == contract["name"]]
    if same:
        contract_rec = same[0]
        fields = {k: v for k, v in contract_rec.model_dump(mode="json", exclude_none=True).items() if k in contract}
        if fields != {k: v for k, v in contract.items() if v is not None}:
            raise SystemExit(f"contract {contract['name']} exists with other fields; name the changed contract anew")
    else:
        contract_rec = add(book, "contract", [Item(contract, "contract.json", None)], stamping)[0]
    audit_rec = add(
        book, "flop-audit", [Item({**audit, "contract": contract_rec.id}, "flop_audit.json", None)], stamping
    )[0]
    links = {
        "contract": contract_rec.id,
        "environment": load_env,
        "flop_audit": audit_rec.id,
        "ceiling": ceiling_rec.id,
    }
    out += [ceiling_rec, contract_rec, audit_rec]
    out += add(
        book,
        "measurement",
        [Item({**m, **links}, "measurements.json", f"record {i + 1}") for i, m in enumerate(measurements)],
        stamping,
    )
    out += add(
        book,
        "measurement",
        [
            Item({**m, "environment": load_env, "ceiling": ceiling_rec.id}, "attention.json", f"record {i + 1}")
            for i, m in enumerate(attention)
        ],
        stamping,
    )
    if args.note:
        out += add(
            book,
            "note",
            [Item({"body": args.note, "title": "H200 collectors run: device time and command"}, "<note>", None)],
            stamping,
        )
    for r in out:
        print(r.kind, r.id, r.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
