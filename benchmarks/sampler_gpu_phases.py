"""Run the process sampler over a GPU workload in three marked phases (stage, compute, release).

Proves the NVML columns on a real GPU: per-process GPU memory attributed to the phase
that allocated it, utilization high only while computing. Usage (on a GPU machine):

    python benchmarks/sampler_gpu_phases.py OUT_DIR

It makes a scratch ledger in OUT_DIR/ledger, runs `ledger sampler run` over a child
python that allocates 8 GiB on the GPU, multiplies matrices, and frees them, and prints
the record. Nothing here is imported by ledger itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

HOG = textwrap.dedent("""\
    import time, torch
    from ledger.collectors.sampler import mark
    torch.cuda.init()
    mark("stage")
    held = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")   # 8 GiB on the device
    host = torch.ones(2 << 30, dtype=torch.uint8)                   # 2 GiB anonymous on the host
    torch.cuda.synchronize(); time.sleep(1.5)
    mark("compute")
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    t = time.time()
    while time.time() - t < 3.0:
        for _ in range(20):
            a @ a
        torch.cuda.synchronize()
    time.sleep(0.5)
    mark("release")
    del held, host, a
    torch.cuda.empty_cache(); torch.cuda.synchronize(); time.sleep(1.5)
    mark("", end=True)
    """)


def main() -> int:
    out = Path(sys.argv[1]).resolve()
    book = out / "ledger"
    book.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "probe",
        "GIT_AUTHOR_EMAIL": "probe@invalid",
        "GIT_COMMITTER_NAME": "probe",
        "GIT_COMMITTER_EMAIL": "probe@invalid",
    }
    ledger = [sys.executable, "-m", "ledger.cli.main"]
    subprocess.run(["git", "init", "-q"], cwd=book, check=True)
    subprocess.run([*ledger, "init"], cwd=book, check=True, env=env, stdout=subprocess.DEVNULL)
    subprocess.run(["git", "add", "-A"], cwd=book, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=book, check=True, env=env)
    (out / "hog.py").write_text(HOG)
    run = subprocess.run(
        [
            *ledger,
            "sampler",
            "run",
            "--interval",
            "0.1",
            "--topology",
            "1x H200",
            "--title",
            "sampler GPU phase probe",
            "--",
            sys.executable,
            str(out / "hog.py"),
        ],
        cwd=book,
        env=env,
        text=True,
        capture_output=True,
    )
    print(run.stdout)
    print(run.stderr, file=sys.stderr)
    for path in sorted((book / "ledger" / "records").rglob("*")):
        if path.is_file() and path.name != ".gitignore":
            print("FILE", path.relative_to(book))
    [rec_path] = (book / "ledger" / "records" / "memory-profile").rglob("*.json")
    rec = json.loads(rec_path.read_text())
    print(json.dumps({k: rec[k] for k in ("processes", "phases", "gpu", "samples")}, indent=1))
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
