"""Secrets: tracker API keys, hub tokens, cloud keys and GitHub tokens planted in the
environment and in the inputs are never recorded by a collector (`ledger collect env`,
the source stamp's remote URL, `ledger sampler run`), and the checker refuses a record
that carries one, whichever input path brought it in.

The tokens are fakes in each vendor's documented shape, built at run time so that this
file itself never holds one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from checks.check_helpers import raw_record
from conftest import cli, git, run_ledger

_HEX = "0123456789abcdef"
_ALNUM = "A1b2C3d4E5f6G7h8J9k0LmNpQrStUvWxYz"


def _fake(prefix: str, alphabet: str, n: int) -> str:
    return prefix + (alphabet * (n // len(alphabet) + 1))[:n]


#: What each vendor's token looks like: a W&B API key (40 hex), a Hugging Face token,
#: an AWS access key id and secret, classic and fine-grained GitHub tokens.
TOKENS = {
    "wandb": _fake("", _HEX, 40),
    "huggingface": _fake("hf_", _ALNUM, 34),
    "aws_key_id": _fake("AKIA", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
    "aws_secret": _fake("", _ALNUM + "/+", 40),
    "github": _fake("ghp_", _ALNUM, 36),
    "github_pat": _fake("github_pat_", _ALNUM + "_", 82),
}
#: The same tokens as they sit in a job's environment.
SECRET_ENV = {
    "WANDB_API_KEY": TOKENS["wandb"],
    "HF_TOKEN": TOKENS["huggingface"],
    "HUGGING_FACE_HUB_TOKEN": TOKENS["huggingface"],
    "AWS_ACCESS_KEY_ID": TOKENS["aws_key_id"],
    "AWS_SECRET_ACCESS_KEY": TOKENS["aws_secret"],
    "GITHUB_TOKEN": TOKENS["github"],
    "GH_TOKEN": TOKENS["github_pat"],
    # Tokens inside the values of variables whose names are on the performance allowlist.
    "TORCHINDUCTOR_CACHE_DIR": f"/scratch/{TOKENS['huggingface']}/inductor",
    "NCCL_DEBUG_FILE": f"https://ci:{TOKENS['github']}@logs.example.invalid/nccl.%h",
    "CUBLASLT_LOG_FILE": f"/tmp/{TOKENS['aws_key_id']}.log",
    "TORCH_HOME": f"/home/u/.cache/{TOKENS['github_pat']}",
    "CUDA_CACHE_PATH": f"/cache/wandb_api_key={TOKENS['wandb']}",
}
#: How each token is written in an input so that its vendor's shape is recognisable.
IN_INPUT = {
    "wandb": f"WANDB_API_KEY={TOKENS['wandb']}",
    "huggingface": f"--hf-token {TOKENS['huggingface']}",
    "aws_key_id": f"AWS_ACCESS_KEY_ID={TOKENS['aws_key_id']}",
    "aws_secret": f"aws_secret_access_key = {TOKENS['aws_secret']}",
    "github": f"https://x-access-token:{TOKENS['github']}@github.com/org/repo.git",
    "github_pat": f"GH_TOKEN={TOKENS['github_pat']}",
}


def _leaks(text: str) -> list[str]:
    return [name for name, token in TOKENS.items() if token in text]


def _record_texts(repo: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in (repo / "ledger" / "records").rglob("*") if p.is_file())


def test_collect_env_records_no_token_from_the_environment(repo: Path) -> None:
    out = run_ledger(repo, "collect", "env", "--format", "json", env={**SECRET_ENV, "NCCL_DEBUG": "WARN"})
    assert out.returncode == 0, out.stderr
    [added] = json.loads(out.stdout)
    text = (repo / added["path"]).read_text()
    assert json.loads(text)["env_flags"]["NCCL_DEBUG"] == "WARN"  # the allowlist still works
    assert _leaks(text) == []
    for name in ("WANDB_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "GH_TOKEN"):
        assert name not in text


def test_the_environment_collector_api_records_no_token() -> None:
    from ledger.collectors.environment import allowlisted_env, collect_environment

    assert _leaks(json.dumps(allowlisted_env(SECRET_ENV))) == []
    body = collect_environment(env=SECRET_ENV, import_torch=False)
    assert _leaks(json.dumps(body, default=str)) == []


@pytest.mark.parametrize(
    "url",
    [
        f"https://x-access-token:{TOKENS['github']}@github.com/org/campaign.git",
        f"https://{TOKENS['github_pat']}@github.com/org/campaign.git",
        f"https://user:{TOKENS['huggingface']}@huggingface.co/org/model",
        f"https://oauth2:{TOKENS['wandb']}@gitlab.example.invalid/org/campaign.git",
    ],
)
def test_the_source_stamp_drops_credentials_from_the_remote_url(repo: Path, url: str) -> None:
    git(repo, "remote", "add", "origin", url)
    out = run_ledger(repo, "add", "note", "-", "--format", "json", input="body: stamped")
    assert out.returncode == 0, out.stderr
    record = json.loads((repo / json.loads(out.stdout)[0]["path"]).read_text())
    assert record["source"]["repo"].endswith(url.rsplit("@", 1)[1])
    assert _leaks(json.dumps(record)) == []


def test_the_sampler_records_no_token_from_its_command_or_environment(repo: Path) -> None:
    script = "import time; time.sleep(0.3)"
    out = run_ledger(
        repo,
        "sampler",
        "run",
        "--no-nvml",
        "--interval",
        "0.05",
        "--format",
        "json",
        "--",
        sys.executable,
        "-c",
        script,
        "--hf-token",
        TOKENS["huggingface"],
        f"--wandb-key={TOKENS['wandb']}",
        f"https://x-access-token:{TOKENS['github']}@github.com/org/data.git",
        env=SECRET_ENV,
    )
    assert out.returncode == 0, out.stderr
    text = _record_texts(repo)
    assert "memory-profile" in text
    assert _leaks(text) == []
    assert _leaks(out.stdout) == []


@pytest.mark.slow
def test_no_input_path_writes_a_token_the_checker_refuses(repo: Path, tmp_path: Path) -> None:
    """Each input path is refused at write time by the checker's own `secrets` rule (exit 2,
    nothing written), so `ledger check` never meets what `ledger add` let through. The first
    token goes through the installed command (a new process, as a user runs it); the others
    through the same entry in this process (tests/conftest.py: cli)."""
    for n, (name, planted) in enumerate(IN_INPUT.items()):
        run = run_ledger if n == 0 else cli
        # ledger add (YAML)
        (tmp_path / f"{name}.yaml").write_text(f"body: 'the run used {planted}'\n")
        # ledger add --from-log: the harness echoed its command line
        log = tmp_path / f"{name}.log"
        log.write_text(
            "starting\nLEDGER " + json.dumps({"samples": [0.7, 0.71], "command": f"python train.py {planted}"}) + "\n"
        )
        # ledger import: a hyperfine export of a command that carried the token
        doc = json.loads((Path(__file__).parents[1] / "importers" / "data" / "hyperfine_sleep.json").read_text())
        doc["results"] = doc["results"][:1]
        doc["results"][0]["command"] = f"curl -H 'Authorization: {planted}' https://example.invalid"
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
        for args in (
            ("add", "note", str(tmp_path / f"{name}.yaml")),
            ("add", "measurement", "--from-log", str(log)),
            ("import", "hyperfine", str(tmp_path / f"{name}.json")),
        ):
            result = run(repo, *args)
            assert result.returncode == 2 and ": secrets: " in result.stderr, (name, args, result.stderr)
            assert planted not in result.stderr  # the refusal names the rule, never echoes the token
    assert not list((repo / "ledger" / "records").rglob("*.json"))
    # The same token in a record's command, written by hand (another tool, a hand edit):
    # `ledger check` refuses it by the same rule.
    for n, planted in enumerate(IN_INPUT.values()):
        path = raw_record(repo, "measurement", {"samples": [0.7], "command": f"python train.py {planted}"})
        result = (run_ledger if n == 0 else cli)(repo, "check", "--all", "--format", "json")
        found = [v["rule"] for v in json.loads(result.stdout)["violations"] if v["file"].endswith(path.name)]
        assert result.returncode == 1 and "secrets" in found, (planted[:6], found)
        path.unlink()


def test_the_sandwich_runner_records_no_token_from_its_arm_commands(repo: Path) -> None:
    cmd = f"{sys.executable} -c pass"
    out = run_ledger(
        repo,
        "sandwich",
        "--a",
        f"WANDB_API_KEY={TOKENS['wandb']} {cmd}",
        "--candidate",
        f"HF_TOKEN={TOKENS['huggingface']} {cmd} --hf-token {TOKENS['huggingface']}",
        "--rounds",
        "1",
        "--floor",
        "1000",
        env=SECRET_ENV,
    )
    assert out.returncode == 0, out.stderr
    text = _record_texts(repo)
    assert "sandwich" in text and "<redacted>" in text
    assert _leaks(text) == []
