"""A small, fixed campaign for the site tests: explicit ids and times, so pages are deterministic."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

T0 = datetime(2026, 7, 20, 9, 0, tzinfo=UTC)
SHA_A = "20c36acef" + "0" * 31
SHA_B = "52f1114dd" + "1" * 31


def fixed_id(at: datetime, n: int) -> str:
    from ulid import ULID

    ms = int(at.timestamp() * 1000)
    return str(ULID.from_bytes(ms.to_bytes(6, "big") + n.to_bytes(10, "big")))


class Campaign:
    """Writes sealed records with fixed ids and times into a ledger."""

    def __init__(self, root: Path, text: str | None = None):
        from ledger.store import Ledger
        from ledger.store.init import init

        init(root)
        self.root = root
        self.ledger = Ledger.open(root)
        self.n = 0
        self.text = text  # when set, planted in every free-text field

    def t(self, value: str) -> str:
        return f"{value} {self.text}" if self.text else value

    def add(
        self,
        kind: str,
        minutes: int,
        body: dict[str, Any],
        *,
        alloc: str = "1627918",
        topology: str = "4x GB200",
        sha: str = SHA_A,
    ) -> str:
        from ledger.schema.registry import KINDS
        from ledger.store.add import seal_record

        self.n += 1
        at = T0 + timedelta(minutes=minutes)
        data = {
            "id": fixed_id(at, self.n),
            "kind": kind,
            "created_at": at.isoformat(),
            "tool": {"name": "ledger", "version": "0.1.0"},
            "sha256": "0" * 64,
            "source": {"sha": sha, "repo": self.t("https://example.invalid/fastvideo.git"), "branch": "main"},
            "allocation": {
                "id": self.t(alloc),
                "scheduler": "slurm",
                "topology": self.t(topology),
                "nodes": 1,
                "gpus_per_node": 4,
            },
            **body,
        }
        if self.text:
            data["links"] = {
                "urls": ["javascript:alert(9)", f"https://example.invalid/?q={self.text}"],
                "tracker_runs": [self.text],
                "jobs": [self.text],
            }
        record = KINDS[kind].model_validate(data)
        self.ledger.write([seal_record(record)], durable=False)
        return record.id


def build_campaign(root: Path, text: str | None = None) -> Campaign:
    c = Campaign(root, text)
    t = c.t
    contract = c.add(
        "contract",
        0,
        {
            "name": "ltx2-t2v-fp32master-81x480x832",
            "model": t("LTX-2 T2V"),
            "param_precision": "fp32",
            "optimizer_state_precision": "fp32",
            "compute_precision": "bf16",
            "shape": {"frames": 81, "height": 480, "width": 832},
            "attention": t("FA4 dense"),
            "compile": "regional",
            "checkpointing": "none",
            "warmup_steps": 10,
            "measured_steps": 20,
            "description": t("The accepted measurement contract."),
        },
    )
    env_ok = c.add(
        "environment",
        1,
        {
            "hostname": t("gb200-a"),
            "driver": "580.65",
            "cuda": "13.0",
            "torch": "2.13.0",
            "gpus": [
                {
                    "index": i,
                    "name": t("NVIDIA GB200"),
                    "sm_clock_mhz": 1965.0,
                    "sm_clock_max_mhz": 2062.0,
                    "power_draw_w": 900.0,
                    "power_limit_w": 1200.0,
                }
                for i in range(2)
            ],
            "env_flags": {"TORCHINDUCTOR_COORDINATE_DESCENT_TUNING": t("1")},
            "health": {"verdict": "healthy"},
        },
    )
    env_bad = c.add(
        "environment",
        2,
        {
            "hostname": t("gb200-b"),
            "health": {"verdict": "degraded", "reasons": [t("SM clock 1,470 MHz under load")]},
        },
        alloc="1629519",
        topology="8x GB200",
    )
    audit = c.add(
        "flop-audit",
        3,
        {
            "contract": contract,
            "flop_per_sample": 353880819892224,
            "derivation": t("strict no-recompute blocks-only count"),
            "counted_flop_per_sample": 353880819892224,
            "peak": {"name": "house-2450", "tflops_per_gpu": 2450.0},
        },
    )
    samples4 = [0.7079, 0.7081, 0.7075, 0.7090, 0.7078]
    m4 = c.add(
        "measurement",
        10,
        {
            "contract": contract,
            "environment": env_ok,
            "flop_audit": audit,
            "samples": samples4,
            "world_size": 4,
            "local_batch": 2,
            "global_batch": 8,
            "throughput": 11.30,
            "mfu_percent": 40.81,
            "peak_convention": "house-2450",
            "health": "healthy",
            "command": t("torchrun --nproc-per-node 4 run_current.sh | tee log"),
            "notes": t("final equal-global-batch result"),
            "title": t("4x/B2 final"),
        },
    )
    m8 = c.add(
        "measurement",
        20,
        {
            "contract": contract,
            "samples": [0.9933, 0.9934, 0.9931],
            "world_size": 8,
            "local_batch": 3,
            "global_batch": 24,
            "throughput": 24.16,
            "mfu_percent": 43.62,
            "peak_convention": "house-2450",
            "health": "healthy",
        },
        alloc="1630001",
        topology="8x GB200",
    )
    c.add(
        "measurement",
        30,
        {
            "contract": contract,
            "environment": env_bad,
            "samples": [1.4217, 1.4220],
            "world_size": 8,
            "local_batch": 3,
            "global_batch": 24,
            "health": "degraded",
            "health_reasons": [t("clocks degraded")],
        },
        alloc="1629519",
        topology="8x GB200",
    )
    c.add(
        "measurement",
        40,
        {
            "contract": contract,
            "outcome": "oom",
            "world_size": 1,
            "local_batch": 1,
            "global_batch": 1,
            "notes": t("OOM with FP32 Adam state"),
        },
        alloc="1627000",
        topology="1x GB200",
    )
    a = c.add("measurement", 50, {"contract": contract, "samples": [0.7200, 0.7201], "title": t("arm A")})
    cand = c.add(
        "measurement", 51, {"contract": contract, "samples": [0.7213, 0.7214], "title": t("candidate")}, sha=SHA_B
    )
    b = c.add("measurement", 52, {"contract": contract, "samples": [0.7203, 0.7202], "title": t("arm B")})
    sandwich = c.add(
        "sandwich",
        53,
        {
            "contract": contract,
            "control_a": a,
            "candidate": cand,
            "control_b": b,
            "candidate_label": t("head 52f1114dd"),
            "a_value": 0.72005,
            "candidate_value": 0.72135,
            "b_value": 0.72025,
            "midpoint": 0.72015,
            "delta": 0.0012,
            "delta_percent": 0.1666,
            "drift_percent": 0.0278,
            "floor_percent": 0.5,
            "verdict": "neutral",
        },
        sha=SHA_B,
    )
    first = c.add(
        "decision",
        60,
        {
            "family": t("no activation checkpointing, FA4, regional compile"),
            "verdict": "accepted",
            "qualifier": t("largest practical wins"),
            "mechanism": t("removes recompute"),
            "where_to_continue": t("current recipe and `run_current.sh`"),
            "evidence": [m4, m8],
        },
    )
    c.add(
        "decision",
        61,
        {
            "family": t("raw velocity, max-autotune"),
            "verdict": "rejected",
            "mechanism": t("no measurable win"),
            "where_to_continue": t("do not repeat without a new mechanism"),
            "evidence": [sandwich],
        },
    )
    c.add(
        "decision",
        62,
        {
            "family": t("no activation checkpointing, FA4, regional compile"),
            "verdict": "accepted",
            "qualifier": t("topology sensitive"),
            "mechanism": t("removes recompute; 8x needs two trays"),
            "where_to_continue": t("re-gate on a healthy 8x pair"),
            "evidence": [m4, m8],
            "supersedes": [first],
        },
    )
    c.add(
        "hypothesis",
        70,
        {
            "statement": t("the 59 GiB fall is model residency"),
            "status": "refuted",
            "evidence": [env_bad],
            "settled_by": t("one-clock trace"),
            "owner": t("ana"),
        },
    )
    c.add(
        "hypothesis",
        71,
        {
            "statement": t("the fall is a device-class allocation"),
            "status": "open",
            "settled_by": t("nvidia-smi --query-compute-apps"),
            "owner": t("ben"),
        },
    )
    c.add(
        "gate",
        80,
        {
            "command": t("pytest tests/gates -q"),
            "exit_code": 0,
            "executed": 12,
            "passed": 12,
            "skipped": 1,
            "skipped_names": [t("test_fa4_fwd")],
            "outcome": "pass",
        },
    )
    c.add("issue", 90, {"number": 1044, "title": t("re-gate env-only stack on healthy 8x"), "owner": t("ana")})
    c.add("note", 100, {"body": t("Historical 1x runs used BF16 master weights.\nThey are capacity diagnostics.")})
    for i in range(3):
        # Uncited measurements: they go to the grouped listing, not a page each.
        c.add(
            "measurement",
            110 + i,
            {"metric": t("decode_time"), "unit": "s", "samples": [2681.0 + i], "title": t(f"decode probe {i}")},
            alloc="local-gb10",
            topology="1x GB10",
        )
    spec = c.ledger.specs_dir / "decode-speed.md"
    spec.write_text(
        "---\n"
        f"title: {_yaml_str(t('LTX-2.5 decode speed'))}\n"
        "owed:\n"
        f"  - item: {_yaml_str(t('queue the one-clock trace'))}\n"
        f"    owner: {_yaml_str(t('ana'))}\n"
        "    issue: 1044\n"
        f"    evidence: [{env_bad}]\n"
        "hypotheses:\n"
        f"  - statement: {_yaml_str(t('decode has no device arm'))}\n"
        "    status: supported\n"
        "gates:\n"
        f"  - name: {_yaml_str(t('decode parity'))}\n"
        f"    command: {_yaml_str(t('pytest -k decode'))}\n"
        "---\n\n"
        f"The decode runs on the CPU reference arm. {t('')}\n\n"
        "See [the other spec](other.md) and [a site](https://example.invalid/x).\n\n"
        "## 7. Owed\n\n"
        f"- settle residency, owner: ana, #1045 {t('')}\n",
        encoding="utf-8",
    )
    (c.ledger.specs_dir / "other.md").write_text(
        "---\ntitle: Other\n---\n\nBack to [decode](decode-speed.md#7-owed).\n", encoding="utf-8"
    )
    return c


def _yaml_str(value: str) -> str:
    import json

    return json.dumps(value)  # a JSON string is a valid YAML flow scalar


@pytest.fixture
def campaign(tmp_path: Path) -> Campaign:
    return build_campaign(tmp_path / "campaign")


@pytest.fixture(scope="session")
def fixed_campaign(tmp_path_factory) -> Campaign:
    """One campaign shared by tests that only read it (built once per session)."""
    return build_campaign(tmp_path_factory.mktemp("fixed") / "campaign")


@pytest.fixture(scope="session")
def generated(fixed_campaign):
    from ledger.site import generate

    pages, data, docs = generate(fixed_campaign.ledger)
    return docs, pages, data


@pytest.fixture(scope="session")
def own_site(tmp_path_factory) -> Path:
    """This repository's own documentation site, built once per run through the real command
    (`ledger site build --strict`, as .github/workflows/pages.yml runs it) from a copy of its
    docs, ledger and configuration, so the build writes nothing into the checkout. Returns the
    copy's root (the site is `root / "site"`); read only. The docs test and the browser walk
    share it (tests/conftest.py: shared_build)."""
    from tests.conftest import ROOT, run_ledger, shared_build

    def make(folder: Path) -> None:
        root = folder / "repo"
        root.mkdir()
        for name in ("docs", "ledger"):
            # docs/evidence is what the build generates: left out, so a stale one is not copied.
            shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("evidence", "__pycache__"))
        for name in ("mkdocs.yml", "ledger.yaml", "README.md"):
            shutil.copy2(ROOT / name, root / name)
        result = run_ledger(root, "site", "build", "--strict")
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    return shared_build(tmp_path_factory, "own-site", make) / "repo"
