"""Stamps filled automatically: the measured source's commit, the allocation, the tool, the time.

The allocation comes from the scheduler's environment (SLURM, torchrun, common CI
systems) or is the local machine; flags override every detected value.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, Problem
from ..git import Git, GitError, looks_bare
from ..redact import redact_url as _redact_url
from ..schema.envelope import Allocation, Source, Tool
from ..version import __version__

# scp-style `user:password@host:path`, a colon in the password too (ledger.redact's shape stops
# at one); a user name alone (`git@github.com:org/repo`) is kept.
_SCP_CREDENTIALS_RE = re.compile(r"^[^/@\s:]+:[^/@\s]+@(?=[^/@\s:]+:)")
# Query strings of remote URLs carry tokens (`?access_token=`, `?private_token=`); none identifies a repository.
_QUERY_RE = re.compile(r"\?.*$")
_WINDOWS_PATH_RE = re.compile(r"^[A-Za-z]:[\\/]")


def tool_stamp() -> Tool:
    return Tool(version=__version__)


def redact_url(url: str) -> str:
    """Remove `user:token@` (URL or scp-style) and any query string from a remote URL: a token in
    a remote must never reach the ledger."""
    url = _redact_url(url)  # ledger.redact's shapes, the checker's own
    url = _SCP_CREDENTIALS_RE.sub("", url)
    return _QUERY_RE.sub("", url)


def is_local_path(text: str) -> bool:
    """True for a filesystem location of one machine: an absolute path, `~/...`, a `file:` URL
    or a Windows drive path. Such a string names where a checkout lives, not what it is."""
    return text.startswith(("/", "~", "file:", "\\\\")) or bool(_WINDOWS_PATH_RE.match(text))


#: Prefix of a repository identity made from its root commit (see `repository_identity`).
ROOT_COMMIT_PREFIX = "git-root:"


def repository_identity(remote_url: str | None, root_commits: list[str]) -> str | None:
    """What `source.repo` says: the remote URL without credentials when the repository has a
    remote that is not a local path; otherwise `git-root:<sha>` of its (first, sorted) root
    commit, the same for every clone and every folder on every machine, and naming no folder.
    A repository with no commit has no identity (None)."""
    if remote_url and not is_local_path(remote_url):
        return redact_url(remote_url)
    if root_commits:
        return ROOT_COMMIT_PREFIX + sorted(root_commits)[0]
    return None


def source_stamp(path: Path, exclude: Path | None = None) -> Source:
    """Commit, dirty flag and diff hash of the git checkout at `path`.

    `exclude` (the ledger's records folder, when the ledger lives in the measured checkout)
    is left out of the diff: records are not the measured source, and diffing them made
    every `ledger add` stat every record file, growing with the ledger.
    """
    not_a_checkout = InputError(
        "source is not a git checkout",
        [
            Problem(
                str(path),
                "source",
                "is not inside a git checkout",
                "pass --source PATH of the measured checkout, or give source.sha in the record",
            )
        ],
    )
    if not Path(path).is_dir():
        raise not_a_checkout
    if looks_bare(Path(path)):
        raise InputError(
            "source is a bare repository",
            [
                Problem(
                    str(path),
                    "source",
                    "is a bare repository (git's own files, as a repository committed inside a work tree "
                    "holds them); ledger reads a source only from a checkout, never a bare one it finds",
                    "point `source:` (or --source) at a checkout you cloned",
                )
            ],
        )
    git = Git(Path(path))
    top = git.maybe("rev-parse", "--show-toplevel")
    if not top:  # not in a repository, or in a bare one / inside .git: no checkout to stamp
        raise not_a_checkout
    sha = git.maybe("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not sha:
        raise InputError(
            "source has no commit",
            [Problem(str(path), "source", "the checkout has no commit yet", "commit the measured source first")],
        )
    # Tracked changes only: untracked scratch files do not change what was measured. Exact bytes.
    pathspec: list[str] = []
    if exclude is not None:
        try:
            rel = Path(exclude).resolve().relative_to(Path(top).resolve())
        except ValueError:
            rel = None
        if rel is not None and rel.parts:
            pathspec = ["--", ".", f":(exclude,top){rel.as_posix()}"]
    try:
        diff = git.run("diff", "--no-ext-diff", "--no-color", "HEAD", "--binary", *pathspec)
    except GitError as exc:
        raise InputError(
            "source cannot be read", [Problem(str(path), "source", str(exc), "run `git status` in the checkout")]
        ) from None
    dirty = bool(diff)
    remote_url = git.maybe("remote", "get-url", "origin")
    # Never the checkout's folder: it names a user's home and differs between machines that
    # measured the same commit (issue 18).
    repo_id = repository_identity(remote_url, (git.maybe("rev-list", "--max-parents=0", "HEAD") or "").split())
    return Source(
        repo=repo_id,
        sha=sha,
        dirty=dirty,
        diff_sha256=hashlib.sha256(diff).hexdigest() if dirty else None,
        branch=git.maybe("symbolic-ref", "--quiet", "--short", "HEAD") or None,
    )


def _int(env: Mapping[str, str], *names: str) -> int | None:
    for name in names:
        raw = env.get(name)
        if raw:
            # SLURM writes counts like "4", "4(x2)" or "gpu:gb200:4"; the last integer is the count.
            found = re.findall(r"\d+", raw.split("(")[0])
            if found:
                return int(found[-1])
    return None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:8]
    except OSError:
        return "0"


def gpus_visible(env: Mapping[str, str]) -> bool:
    """Whether this process can see a GPU, without importing torch: CUDA_VISIBLE_DEVICES (or
    ROCm's HIP_VISIBLE_DEVICES) set empty or to -1 hides them all; else an NVIDIA driver's
    GPU list, or AMD's /dev/kfd."""
    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        value = env.get(name)
        if value is not None and value.strip() in ("", "-1"):
            return False
    try:
        if any(Path("/proc/driver/nvidia/gpus").iterdir()):
            return True
    except OSError:
        pass
    return Path("/dev/kfd").exists()


#: Schedulers `--allocation SCHEDULER:ID` may name (`slurm:1627918`, `slurm:unknown`).
SCHEDULERS = (
    "slurm",
    "torchrun",
    "github-actions",
    "gitlab-ci",
    "buildkite",
    "circleci",
    "jenkins",
    "local",
    "pbs",
    "lsf",
    "k8s",
)


def split_named(text: str) -> tuple[str | None, str]:
    """(scheduler, id) of a named allocation: `slurm:1627918` names a Slurm job, `1627918` only
    an id (its scheduler unknown), `unknown` an allocation whose id no record kept."""
    head, sep, rest = text.partition(":")
    if sep and head in SCHEDULERS and rest:
        return head, rest
    return None, text


@dataclass(frozen=True)
class AllocationOverrides:
    id: str | None = None
    topology: str | None = None
    scheduler: str | None = None


def _topology(
    env: Mapping[str, str], overrides: AllocationOverrides, nodes: int | None, gpn: int | None, cpu_ranks: int | None
) -> str | None:
    """The topology as given (`--topology`, LEDGER_TOPOLOGY), else from the scheduler's counts."""
    topology = overrides.topology or env.get("LEDGER_TOPOLOGY")
    if topology is None and nodes is not None and gpn:
        topology = f"{nodes * gpn}x {env.get('LEDGER_GPU_NAME', 'GPU')}"
    elif topology is None and cpu_ranks:
        topology = f"{cpu_ranks}x CPU process"
    return topology


def detect_allocation(env: Mapping[str, str] | None = None, overrides: AllocationOverrides | None = None) -> Allocation:
    """Allocation from SLURM, torchrun or CI variables, else the local machine (host + boot)."""
    env = os.environ if env is None else env
    overrides = overrides or AllocationOverrides()
    nodes: int | None = None
    gpn: int | None = None
    cpu_ranks: int | None = None
    hosts: list[str] = []
    if env.get("SLURM_JOB_ID"):
        scheduler, alloc_id = "slurm", env["SLURM_JOB_ID"]
        nodes = _int(env, "SLURM_JOB_NUM_NODES", "SLURM_NNODES")
        gpn = _int(env, "SLURM_GPUS_ON_NODE", "SLURM_GPUS_PER_NODE", "SLURM_JOB_GPUS_PER_NODE")
        if gpn is None and env.get("SLURM_JOB_GPUS"):
            gpn = len(env["SLURM_JOB_GPUS"].split(","))
        if env.get("SLURM_JOB_NODELIST"):
            hosts = [env["SLURM_JOB_NODELIST"]]
    elif env.get("WORLD_SIZE") and env.get("LOCAL_WORLD_SIZE"):
        scheduler = "torchrun"
        world, local = int(env["WORLD_SIZE"]), int(env["LOCAL_WORLD_SIZE"])
        nodes = max(1, world // max(local, 1))
        # torchrun's LOCAL_WORLD_SIZE counts processes, not GPUs: `--nproc-per-node 8` on a
        # machine without one runs 8 CPU processes, which are not "8x GPU".
        if gpus_visible(env):
            gpn = local
        else:
            cpu_ranks = nodes * local
        run = env.get("TORCHELASTIC_RUN_ID") or env.get("MASTER_ADDR", "") + ":" + env.get("MASTER_PORT", "")
        alloc_id = f"torchrun-{run}" if run.strip(":") else f"torchrun-{socket.gethostname()}-{_boot_id()}"
    elif env.get("GITHUB_ACTIONS") == "true" and env.get("GITHUB_RUN_ID"):
        scheduler = "github-actions"
        alloc_id = f"{env['GITHUB_RUN_ID']}-{env.get('GITHUB_RUN_ATTEMPT', '1')}"
    elif env.get("GITLAB_CI") and env.get("CI_JOB_ID"):
        scheduler, alloc_id = "gitlab-ci", env["CI_JOB_ID"]
    elif env.get("BUILDKITE_JOB_ID"):
        scheduler, alloc_id = "buildkite", env["BUILDKITE_JOB_ID"]
    elif env.get("CIRCLECI") and env.get("CIRCLE_WORKFLOW_JOB_ID"):
        scheduler, alloc_id = "circleci", env["CIRCLE_WORKFLOW_JOB_ID"]
    elif env.get("JENKINS_URL") and env.get("BUILD_TAG"):
        scheduler, alloc_id = "jenkins", env["BUILD_TAG"]
    else:
        # One boot of one host is one allocation: a reboot may change clocks and firmware state.
        host = socket.gethostname()
        scheduler, alloc_id = "local", f"local-{host}-{_boot_id()}"
        hosts = [host]
    topology = _topology(env, overrides, nodes, gpn, cpu_ranks)
    named_scheduler, named = split_named(overrides.id or env.get("LEDGER_ALLOCATION") or "")
    if named and named != alloc_id:
        # A named allocation (`--allocation`, LEDGER_ALLOCATION) is another machine or job than
        # the one running `ledger add`: nothing detected here describes it, not even its
        # scheduler (a Slurm job re-entered on a laptop is not `local`).
        hosts, nodes, gpn = [], None, None
        topology = overrides.topology or env.get("LEDGER_TOPOLOGY")
        scheduler = named_scheduler or "unknown"
    return Allocation(
        id=named or alloc_id,
        scheduler=overrides.scheduler or scheduler,
        topology=topology,
        nodes=nodes,
        gpus_per_node=gpn,
        hosts=hosts,
    )
