"""An allocation known by its topology but not by id (issue 28: 20 of the LTX-2 report's gates
name no job), and a Slurm job named on a machine that is not in it. `--allocation unknown`
records no invented id: no environment, comparison or chart joins two such records as one
machine, while a sandwich's arms on it are the sandwich's one allocation, as the report says.
`--allocation slurm:1627918` names the scheduler with the job. Through the real CLI."""

from __future__ import annotations

import json

from conftest import cli


def add(repo, kind: str, data: dict, *args: str) -> str:
    result = cli(repo, "add", kind, "-", *args, input=json.dumps(data))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def shown(repo, rid: str) -> dict:
    return json.loads(cli(repo, "show", rid, "--format", "json").stdout)


def test_unknown_allocations_are_never_one_machine(repo) -> None:
    unknown = ("--allocation", "unknown", "--topology", "4x GB200")
    a = add(repo, "measurement", {"samples": [0.732045], "health": "healthy"}, *unknown)
    assert shown(repo, a)["allocation"] == {
        "id": "unknown",
        "scheduler": "unknown",
        "topology": "4x GB200",
        "hosts": [],
    }
    # A degraded environment on some other unknown allocation says nothing of this run.
    add(repo, "environment", {"health": {"verdict": "degraded", "reasons": ["1,965 MHz bin"]}}, *unknown)
    assert "Allocation health: healthy" in cli(repo, "show", a).stdout
    # Two runs on unknown allocations are not attributable to one machine.
    other = add(repo, "measurement", {"samples": [0.731982]}, *unknown)
    refused = cli(repo, "compare", a, other)
    assert refused.returncode == 2 and "different or unknown allocations" in refused.stderr
    # A sandwich of three arms the report says shared one allocation is taken as one.
    x = add(repo, "measurement", {"samples": [0.732073]}, *unknown)
    made = cli(repo, "sandwich", "--records", a, x, other)
    assert made.returncode == 0, made.stderr
    sid = made.stdout.split("sandwich ")[-1].split()[0]
    assert shown(repo, sid)["allocation"]["id"] == "unknown"
    assert cli(repo, "check", "--all").returncode == 0


def test_a_slurm_job_is_named_with_its_scheduler(repo) -> None:
    rid = add(repo, "measurement", {"samples": [0.721]}, "--allocation", "slurm:1627918", "--topology", "4x GB200")
    assert shown(repo, rid)["allocation"] == {
        "id": "1627918",
        "scheduler": "slurm",
        "topology": "4x GB200",
        "hosts": [],
    }
    # An id alone names no scheduler: not the `local` machine that typed it in.
    rid = add(repo, "measurement", {"samples": [0.721]}, "--allocation", "1631376")
    assert shown(repo, rid)["allocation"]["scheduler"] == "unknown"
    # A colon that names no scheduler is part of the id (torchrun's host:port).
    rid = add(repo, "measurement", {"samples": [0.721]}, "--allocation", "torchrun-node7:29500")
    assert shown(repo, rid)["allocation"]["id"] == "torchrun-node7:29500"
