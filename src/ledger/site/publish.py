"""What the published site says about the machines a ledger was written on.

A record keeps every stamp (the terminal's `ledger show` prints them all), but a site is
public: by default it publishes what a reader needs to judge a figure (commit, scheduler,
topology, which records share an allocation) and nothing that maps the machines or a
user's folders: no hostnames, no boot ids, no local checkout paths, no home folders.

- `source.repo` that is a local folder (older records) is shown as "local checkout".
- Allocation ids that embed a hostname (`local-HOST-BOOT`, torchrun's `HOST:PORT` or
  host-and-boot fallbacks) are replaced by `local#` or `torchrun#` and 8 hex characters of
  their sha256: records of one allocation still share one id, and the host is not there.
- `allocation.hosts` are dropped; an environment's `hostname` (also in its title) becomes
  `host#` and 8 hex characters of its sha256.
- Home and per-user scratch folders inside any text (`/home/NAME/`, `/Users/NAME/`, `/root/`,
  `/scratch/NAME/`) print as `~/`, and GPU UUIDs as `GPU#` and a hash (`scrub_text`, applied by
  every escaping filter).

`site.publish_hosts: true` in ledger.yaml publishes hostnames and allocation ids as recorded
(for an internal site); local paths and home folders are never published.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..store.stamps import ROOT_COMMIT_PREFIX, is_local_path
from ..text import show_invisible

LOCAL_CHECKOUT = "local checkout"
#: Schedulers whose allocation ids are made from a hostname (see store.stamps.detect_allocation).
_HOST_SCHEDULERS = frozenset({"local", "torchrun"})
_HOME = re.compile(
    r"(?:/home/[^/\s\"'<>]+|/Users/[^/\s\"'<>]+|/root(?=[/\s\"'<>]|$)|[A-Za-z]:\\Users\\[^\\\s\"'<>]+"
    r"|/(?:scratch|scratch\d*|lscratch|local_scratch)/[^/\s\"'<>]+)"
)
_HOME_MARKERS = ("/home/", "/Users/", "/root", ":\\Users\\", "scratch")
#: A GPU's (or MIG instance's) UUID names one board of one machine: `GPU-#` and a hash instead.
_GPU_UUID = re.compile(r"\b(GPU|MIG)-[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}\b")


def scrub_text(text: str) -> str:
    """`text` with every home or per-user scratch folder replaced by `~`, every GPU UUID
    by `GPU#` and 8 hex characters of its sha256 (two boards stay two, neither is named),
    and every bidi control or zero-width character shown escaped (ledger.text)."""
    text = show_invisible(text)
    if "GPU-" in text or "MIG-" in text:
        text = _GPU_UUID.sub(lambda m: f"{m.group(1)}#{hashlib.sha256(m.group(0).encode()).hexdigest()[:8]}", text)
    if not any(marker in text for marker in _HOME_MARKERS):
        return text
    return _HOME.sub("~", text)


def public_repo(repo: str | None) -> str | None:
    if repo is None:
        return None
    if repo.startswith(ROOT_COMMIT_PREFIX):
        return repo
    return LOCAL_CHECKOUT if is_local_path(repo) else repo


def public_allocation_id(alloc_id: str, scheduler: str | None) -> str:
    if scheduler not in _HOST_SCHEDULERS:
        return alloc_id
    return f"{scheduler}#{hashlib.sha256(alloc_id.encode('utf-8')).hexdigest()[:8]}"


def public_host(hostname: str) -> str:
    """`host#` and 8 hex digits of the name's sha256: two machines stay two, neither is named."""
    return f"host#{hashlib.sha256(hostname.encode('utf-8')).hexdigest()[:8]}"


def for_publication(record: Any, publish_hosts: bool = False) -> Any:
    """A copy of `record` holding only what the site may publish (the record itself is untouched)."""
    update: dict[str, Any] = {}
    source = record.source
    if source is not None and source.repo is not None:
        shown = public_repo(source.repo)
        if shown != source.repo:
            update["source"] = source.model_copy(update={"repo": shown})
    allocation = record.allocation
    if allocation is not None and not publish_hosts:
        shown_id = public_allocation_id(allocation.id, allocation.scheduler)
        if shown_id != allocation.id or allocation.hosts:
            update["allocation"] = allocation.model_copy(update={"id": shown_id, "hosts": []})
    if not publish_hosts:
        hosts = set(allocation.hosts if allocation is not None else ())
        hostname = getattr(record, "hostname", None)
        if hostname:
            hosts.add(hostname)
            update["hostname"] = public_host(hostname)
        title = getattr(record, "title", None)
        if title and hosts:
            # The environment collector titles a record "HOST: 1x GPU (under load)".
            pattern = (
                r"(?<![\w.-])(?:"
                + "|".join(re.escape(h) for h in sorted(hosts, key=len, reverse=True))
                + r")(?![\w.-])"
            )
            shown_title = re.sub(pattern, lambda m: public_host(m.group(0)), title)
            if shown_title != title:
                update["title"] = shown_title
    return record.model_copy(update=update) if update else record
