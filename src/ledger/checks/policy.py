"""The config that judges a range of commits: the base side's committed `ledger.yaml`, with
the head's tightenings; its loosenings are `config-change` (a rule of the history family)
unless the push records why (a note or decision tagged `ledger-config`). Documents the head
starts to guard (`guard:`) are guarded at once; one it stops guarding is a loosening."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..config import CONFIG_NAME, Config, parse_config
from ..errors import ConfigError
from ..git import EMPTY_TREE, Git
from .registry import Active, configure
from .rule import Rule

#: The tag of a note or decision record that accepts a loosening change of ledger.yaml.
ACCEPT_TAG = "ledger-config"
#: Kinds whose record may accept a config change.
ACCEPT_KINDS = ("note", "decision")
#: Config fields that say where the evidence is; any change to one is a loosening.
PATH_FIELDS = ("records", "specs", "source", "sources")

_RANK = {"off": 0, "warning": 1, "error": 2}


def config_at(git: Git, commit: str, path: str) -> Config | None:
    """The config committed at `commit:path`, or None when the commit has none; the
    defaults when it does not parse there."""
    if commit == EMPTY_TREE:
        return None
    raw = git.read_blobs([f"{commit}:{path}"]).get(f"{commit}:{path}")
    if raw is None:
        return None
    try:
        return parse_config(raw.decode("utf-8", "replace"), f"{path} at {commit[:12]}")
    except ConfigError:
        # A broken config on the base side judges with the defaults, every rule on: the
        # strictest reading, never "no config, so the push's own".
        return Config()


#: Settings no push can loosen, with or without a note: they guard the ledger itself (its
#: history, what is never followed, what is never published) and the site's paths.
LOCKED = (
    "rules.append-only.",
    "rules.behind-remote.",
    "rules.symlinks.",
    "rules.secrets.",
    "site.docs_dir",
    "site.site_dir",
    "site.templates",
    "site.mkdocs_yml",
    "site.publish_hosts",
)
#: Settings of `site:` whose change is a loosening (each is also LOCKED).
SITE_FIELDS = ("docs_dir", "site_dir", "templates", "mkdocs_yml")


@dataclass
class Loosening:
    """One way the head's config is looser than the base's."""

    field: str  # dotted config field, e.g. rules.append-only.severity
    message: str
    new: Any = None  # the looser value, which an accepting note must name

    @property
    def locked(self) -> bool:
        return any(self.field == p or self.field.startswith(p) for p in LOCKED)

    @property
    def name(self) -> str:
        """What an accepting note must name: the rule id for a rule's setting, else the field."""
        parts = self.field.split(".")
        return parts[1] if parts[0] == "rules" and len(parts) > 1 else self.field

    def named_in(self, text: str) -> bool:
        """True when `text` (an accepting record's words) names this setting and its new value."""
        if not self.field:
            return True  # the config removed: any accepting record says why
        new = self.new
        shown = new if isinstance(new, str) else json.dumps(new)
        if isinstance(new, dict):  # `sources:`: each repository and its path, however quoted
            parts = [str(x) for pair in new.items() for x in pair]
            return self.name in text and (shown in text or all(p in text for p in parts))
        return self.name in text and (shown in text or (isinstance(new, list) and all(str(x) in text for x in new)))


@dataclass
class Policy:
    """What judges a range: the base's paths and rules, with the head's tightenings."""

    config: Config
    active: dict[str, Active]
    loosenings: list[Loosening] = field(default_factory=list)


def _looser(rule: Rule, name: str, old: Any, new: Any) -> bool:
    """True when `new` is a looser value of parameter `name` than `old`."""
    if new == old:
        return False
    direction = rule.param_looser.get(name)
    if direction is None and isinstance(old, (int, float)) and isinstance(new, (int, float)):
        direction = "higher"  # every numeric parameter so far is a limit
    if direction is None and isinstance(old, list) and isinstance(new, list):
        return any(item not in new for item in old)  # a list names what is guarded: dropping one loosens
    if direction == "grow" and isinstance(old, list) and isinstance(new, list):
        return any(item not in old for item in new)  # a list of what is let through: adding one loosens
    if direction == "higher":
        # A limit left unset (None) is no limit: setting one tightens, unsetting it loosens.
        if old is None or new is None:
            return new is None
        return new > old
    if direction == "lower":
        return new < old
    return True


def judge_config(base: Config | None, head: Config | None, fallback: Config) -> Policy:
    """The policy for a range from the base's and the head's committed configs.

    No base config (a new ledger): the head's (else `fallback`, the working tree's) judges.
    Otherwise paths come from the base; each rule's severity and parameters are the head's
    where they are at least as strict, else the base's, and each looser value is listed."""
    if base is None:
        config = head or fallback
        return Policy(config, configure(config.rules, CONFIG_NAME))
    base_active = configure(base.rules, f"{CONFIG_NAME} (base)")
    if head is None:
        return Policy(base, base_active, [Loosening("", f"the push removes {CONFIG_NAME}")])
    head_active = configure(head.rules, CONFIG_NAME)
    loosenings: list[Loosening] = []
    for name in PATH_FIELDS:
        old, new = getattr(base, name), getattr(head, name)
        if old != new:
            loosenings.append(Loosening(name, f"moves `{name}` from {old!r} to {new!r}", new))
    for name in SITE_FIELDS:
        old, new = getattr(base.site, name), getattr(head.site, name)
        if old != new:
            loosenings.append(Loosening(f"site.{name}", f"moves `site.{name}` from {old!r} to {new!r}", new))
    if head.site.publish_hosts and not base.site.publish_hosts:
        loosenings.append(Loosening("site.publish_hosts", "turns `site.publish_hosts` from false to true", True))
    # Guarding a document is a tightening and applies at once; no longer guarding one loosens.
    for entry in base.guard:
        if entry not in head.guard:
            loosenings.append(Loosening("guard", f"stops guarding {entry!r}", entry))
    added = [entry for entry in head.guard if entry not in base.guard]
    judged = base.model_copy(update={"guard": [*base.guard, *added]}) if added else base
    active: dict[str, Active] = {}
    for rule_id, was in base_active.items():
        now = head_active[rule_id]
        severity = was.severity
        if _RANK[now.severity] >= _RANK[was.severity]:
            severity = now.severity
        else:
            loosenings.append(
                Loosening(
                    f"rules.{rule_id}.severity",
                    f"turns rule {rule_id} from {was.severity} to {now.severity}",
                    now.severity,
                )
            )
        params = dict(was.params)
        for key, old in was.params.items():
            new = now.params.get(key, old)
            if _looser(was.rule, key, old, new):
                loosenings.append(
                    Loosening(f"rules.{rule_id}.{key}", f"loosens rule {rule_id}'s {key} from {old!r} to {new!r}", new)
                )
            else:
                params[key] = new
        active[rule_id] = Active(was.rule, severity, params)
    return Policy(judged, active, loosenings)


def accepts_config_change(kind: str, tags: tuple[str, ...] | list[str]) -> bool:
    return kind in ACCEPT_KINDS and ACCEPT_TAG in tags
