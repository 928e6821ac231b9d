"""Page rules, on Markdown parsed by markdown-it-py (ledger.pages): rendered table-cell
width, a prose-paragraph budget per page, owed items owned under a high-water mark, and
figures quoted with no more significant figures than their spread supports.

A page may turn a rule off for itself in its front matter:

    ---
    prose_budget: 12          # this page's own budget
    check: {off: [figures-spread]}
    ---
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import NamedTuple

from .. import pages
from ..analysis.figures import percent_digits, supported_digits_relative
from ..analysis.keyed import owner_of
from .result import ERROR, WARNING
from .rule import Rule
from .sweepevidence import SweepEvidence

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "cell-width",
        "pages",
        ERROR,
        "A rendered table cell (what the reader sees: no markup, no link targets) is wider than "
        "the limit. Wide cells break the published tables.",
        "Shorten the cell: move detail to prose under the table or to the record it cites.",
        {"max_chars": 220},
        {"max_chars": "Widest rendered cell, in columns (wide characters count 2)."},
    ),
    Rule(
        "prose-budget",
        "pages",
        ERROR,
        "A page has more prose paragraphs (top-level and quoted; lists and tables are structure) "
        "than its budget: `prose_budget` in its front matter, else the default.",
        "Cut or merge paragraphs, move detail into records or tables, or raise the page's "
        "`prose_budget` in its front matter in a change that argues for it.",
        {"max_paragraphs": 35},
        {"max_paragraphs": "Default budget for pages without `prose_budget`."},
    ),
    Rule(
        "owed-high-water",
        "pages",
        ERROR,
        "Items under Owed sections (`## Owed`, `## 7. Owed`, ...) have owners: an Owner column, "
        "`owner: NAME`, `@handle`, or an issue `#N` whose issue record has an owner. The number of "
        "unowned items may not exceed the high-water mark, and when it falls below it the same "
        "change lowers the mark: the mark only goes down, except by a change that adds notes tagged "
        "`owed-unowned` naming each new unowned item (one a line), the visible record of work nobody owns yet.",
        "Give the item an owner, or file an issue with an owner and name it (#N). When the count "
        "drops, set rules.owed-high-water.high_water in ledger.yaml to the new count. To record new work "
        "nobody owns yet, raise the mark and add a note tagged owed-unowned naming each new item.",
        {"high_water": 0},
        {"high_water": "Unowned owed items allowed across all pages; lower it as items get owners."},
    ),
    Rule(
        "figures-spread",
        "pages",
        ERROR,
        "A quoted figure (9.14x, ~9.14x, 9.14-fold, 12.5%, 0.223 s, each number of a range "
        "`9.14-9.67x` or a list `9.14x/9.67x`) carries more significant figures than its spread "
        "supports, decided as torch.utils.benchmark does: floor(log10(median / spread)), 1 to 4. "
        "A definitional figure, the base of a ratio (`1.00x`, `100%`), is exempt. "
        "The ends of an observed range in a table's Min and Max columns are observations, not "
        "estimates: each is held to the leading place of its row's max - min (0.21 and 0.26 s, "
        "not 0.2134 s), so the two ends stay apart. "
        "The spread is the one stated in the figure's own clause (`~9x, 21-23% spread; the render "
        "takes 2681 s` binds nothing to 2681 s), else in its paragraph or table row when stated on "
        "its own (`21-23% spread`, `±2%`, a Spread column); else that of the measurement records its "
        "cell, row or paragraph names by id, or the page's front matter `evidence:` lists, or the "
        "points of the sweep the page names (`figures: {sweep: NAME}`) at the value its row or "
        "clause quotes, with the base point for a ratio (a ratio carries the sum of their spreads). A record with n < 5 or no spread supports at most two "
        "significant figures unless the page says why (`figures: {why: ...}`). A bare number under "
        "a header with a unit (`Speedup, x`, `Median s`) is a figure. A table quoted beside its "
        "spread declares it (`figures: {spread_column: Spread}`, optionally `columns: [...]`): "
        "figures of rows whose Spread cell holds a value stand as written.",
        "Quote only the supported figures, approximately (`~9x at 16-20 workers`), with the conditions.",
    ),
    Rule(
        "figures-evidence",
        "pages",
        WARNING,
        "A figure in a table of a guarded page has no evidence: no spread in its row (a Spread "
        "column or a stated spread), no record id in its cell, its row or the page (or the front "
        "matter's `evidence:` list), no point of the sweep the page names (`figures: {sweep: NAME}`). "
        "An error on a page whose front matter says `figures: {evidence: required}`, and for a "
        "`figures.sweep` that names no contract sweeping a parameter.",
        "Name the record the figure comes from (its id in the cell, row or page), or state its spread.",
    ),
)

Emit = Callable[..., None]


def page_settings(text: str) -> tuple[dict, str | None]:
    """(front matter, error) of a page."""
    try:
        return dict(pages.front_matter(text).data), None
    except ValueError as exc:
        return {}, str(exc)


def turned_off(front: dict) -> set[str]:
    check = front.get("check") or {}
    off = check.get("off") if isinstance(check, dict) else None
    return {str(x) for x in off} if isinstance(off, list) else set()


class Evidence(NamedTuple):
    """What a figure's digits are judged against: a record's spread (percent) and run count."""

    spread: float | None
    n: int | None


EvidenceOf = Callable[[str], "Evidence | None"]
#: (contract name or id, the page's sweep_column) -> the sweep, or None.
SweepOf = Callable[[str, "str | None"], "SweepEvidence | None"]

#: Below this many runs (or with no spread) a measurement supports at most this many digits.
MIN_RUNS, WEAK_DIGITS = 5, 2


def figure_settings(front: dict) -> dict:
    """The page's `figures:` front matter: spread_column, columns, why, evidence."""
    value = front.get("figures")
    return value if isinstance(value, dict) else {}


def check_page(
    path: str,
    text: str,
    active: dict,
    emit: Emit,
    evidence_of: EvidenceOf,
    *,
    whole_page: bool = True,
    html: bool = False,
    sweep_of: SweepOf | None = None,
) -> None:
    """The page rules on one page. `whole_page`: a figure whose block names no record is judged
    by the records the page names (spec pages, guarded documents; not generated pages). `html`:
    the page is ledger's own generated Markdown, whose raw HTML is ledger's (ledger.pages.markdown).
    `sweep_of`: the sweep a page's `figures: {sweep: NAME}` names (checks.sweepevidence)."""
    front, error = page_settings(text)
    if error:
        emit("prose-budget", path, error, fix="fix the front matter YAML")
    off = turned_off(front)

    def on(rule_id: str) -> bool:
        return rule_id in active and rule_id not in off

    if on("cell-width"):
        limit = active["cell-width"].params["max_chars"]
        for cell in pages.tables(text, html=html):
            if cell.width > limit:
                emit(
                    "cell-width",
                    path,
                    f"table cell (row {cell.row}, column {cell.header or cell.column + 1}) renders {cell.width} characters wide, over {limit}",
                    line=cell.line,
                )
    if on("prose-budget"):
        budget = front.get("prose_budget", active["prose-budget"].params["max_paragraphs"])
        paragraphs = pages.prose_paragraphs(text, html=html)
        if isinstance(budget, int) and len(paragraphs) > budget:
            emit(
                "prose-budget",
                path,
                f"has {len(paragraphs)} prose paragraphs, over the {budget} budget (the first over budget starts here)",
                line=paragraphs[budget].line,
            )
    if on("figures-spread") or on("figures-evidence"):
        settings = figure_settings(front)
        column = settings.get("spread_column")
        columns = settings.get("columns") or ()
        figures = pages.quoted_figures(
            text,
            str(column) if isinstance(column, str) else None,
            tuple(str(c) for c in columns) if isinstance(columns, list) else (),
            html=html,
        )
        page_ids = page_evidence(text, front) if whole_page else ()
        why = bool(settings.get("why"))
        sweep = named_sweep(path, settings, sweep_of, emit) if whole_page else None
        unsupported = []
        for fig in figures:
            if sweep is not None and not fig.ids and fig.spread_percent is None and not fig.beside_spread:
                fig = replace(fig, ids=sweep.ids_for(fig)) if sweep.ids_for(fig) else fig
            problem, found = figure_problem(fig, evidence_of, page_ids, why)
            if problem and on("figures-spread"):
                emit("figures-spread", path, problem, line=fig.line)
            if not found and fig.in_table and not pages.definitional(fig.value, fig.unit):
                unsupported.append(fig)
        if unsupported and on("figures-evidence"):
            first = unsupported[0]
            required = settings.get("evidence") == "required"
            emit(
                "figures-evidence",
                path,
                f"{len(unsupported)} figure(s) in its tables with no evidence found (first: {first.text}): "
                "no spread in the row, no record id in the cell or row, none in the page's `evidence:`",
                line=first.line,
                severity="error" if required else None,
            )


def named_sweep(path: str, settings: dict, sweep_of: SweepOf | None, emit: Emit) -> SweepEvidence | None:
    """The sweep `figures: {sweep: NAME, sweep_column: HEADER}` names; a name that is no
    contract sweeping a parameter is an error: the page's figures would go unjudged."""
    ref = settings.get("sweep")
    if ref is None or sweep_of is None:
        return None
    column = settings.get("sweep_column")
    sweep = sweep_of(str(ref), str(column) if column is not None else None)
    if sweep is None:
        emit(
            "figures-evidence",
            path,
            f"front matter figures.sweep names {str(ref)!r}, which is no contract that sweeps a parameter",
            field="figures.sweep",
            fix="name a contract whose `sweep:` lists the parameter (`ledger list --kind contract`)",
            severity="error",
        )
    return sweep


def page_evidence(text: str, front: dict) -> tuple[str, ...]:
    """Record ids the page names as the evidence of its figures (front matter `evidence:`): an id
    in the body belongs to its own paragraph or row, never to the figures of another."""
    listed = front.get("evidence")
    return tuple(dict.fromkeys(str(i) for i in listed)) if isinstance(listed, list) else ()


def figure_problem(
    fig: pages.Figure, evidence_of: EvidenceOf, page_ids: tuple[str, ...] = (), why: bool = False
) -> tuple[str | None, bool]:
    """(why a quoted figure carries more significant figures than its evidence supports, or
    None; whether any evidence was found for it: a spread beside it or a record it names)."""
    # `~9.14x` claims the same digits as `9.14x`: the tilde does not excuse them.
    if pages.definitional(fig.value, fig.unit):
        return None, True
    if fig.beside_spread:
        return None, True  # quoted beside its spread, as the page declares: the reader sees it
    if fig.resolution is not None:
        # An observed extreme: digits down to the leading place of its row's range.
        if not fig.value:
            return None, True
        allowed = max(1, math.floor(math.log10(abs(fig.value))) - math.floor(math.log10(fig.resolution)) + 1)
        allowed = percent_digits(fig.value, allowed) if fig.unit == "%" else allowed
        if fig.digits > allowed:
            what = "as the median between a min and max" if fig.centre else "as an end of a min-max range"
            return (
                f"{fig.text} carries {fig.digits} significant figures; {what} "
                f"{fig.resolution:g} {'apart' if fig.centre else 'wide'} it supports {allowed}"
            ), True
        return None, True
    spread = fig.spread_percent
    if spread is not None:
        if spread <= 0:
            return None, True
        allowed = supported_digits_relative(spread)
        allowed = percent_digits(fig.value, allowed) if fig.unit == "%" else allowed
        if fig.digits > allowed:
            return f"{fig.text} carries {fig.digits} significant figures; a {spread:g}% spread supports {allowed}", True
        return None, True
    found = [e for e in (evidence_of(i) for i in (fig.ids or page_ids)) if e is not None]
    if not found:
        return None, False
    spreads = [e.spread for e in found if e.spread is not None]
    # A ratio of two measurements carries both spreads.
    spread = (sum(spreads) if fig.unit == "x" and len(spreads) > 1 else max(spreads)) if spreads else None
    weak = [e for e in found if e.spread is None or (e.n is not None and e.n < MIN_RUNS)]
    if spread is not None and spread <= 0 and not weak:
        return None, True  # no variation recorded across enough runs: nothing bounds the digits
    allowed = supported_digits_relative(spread) if spread else 4
    reason = f"a {spread or 0:.3g}% spread of the records it names supports {allowed}"
    if weak and not why and allowed > WEAK_DIGITS:
        allowed = WEAK_DIGITS
        e = weak[0]
        what = f"has n={e.n}" if e.n is not None and e.n < MIN_RUNS else "has no spread"
        reason = (
            f"a measurement it names {what}, which supports at most {WEAK_DIGITS} (under {MIN_RUNS} runs or "
            "no spread), unless the page says why in its front matter (`figures: {why: ...}`)"
        )
    allowed = percent_digits(fig.value, allowed) if fig.unit == "%" else allowed
    if fig.digits > allowed:
        return f"{fig.text} carries {fig.digits} significant figures; {reason}", True
    return None, True


def owed_count(
    texts: dict[str, str], issue_owner: Callable[[int], str | None]
) -> tuple[int, list[tuple[str, int, str]]]:
    """Unowned owed items across pages: (count, [(path, line, text)])."""
    unowned = []
    for path, text in sorted(texts.items()):
        front, _ = page_settings(text)
        if "owed-high-water" in turned_off(front):
            continue
        for line, item_text, owner, issues in owed_of_page(text, front):
            if owner_of(owner, issues, issue_owner):
                continue
            unowned.append((path, line, item_text))
    return len(unowned), unowned


def owed_of_page(text: str, front: dict) -> list[tuple[int, str, str | None, tuple[int, ...]]]:
    """(line, text, owner, issues) of every owed item of a page: the body's Owed sections and
    the front matter's `owed:` list, the same items the site lists."""
    out = [(item.line, item.text, item.owner, tuple(item.issues)) for item in pages.owed_items(text)]
    for entry in pages.spec_owed("", "", front):
        out.append((1, entry.text, entry.owner, entry.issues))
    return out


#: The tag of a note that records new owed items nobody owns yet, naming each (one a line).
UNOWNED_TAG = "owed-unowned"


def item_key(text: str) -> str:
    """An owed item as a note names it: case, spacing and a leading list marker do not matter."""
    return " ".join(text.strip().lstrip("-*+•").split()).casefold()


def item_names(text: str) -> set[str]:
    """The keys a note may name an owed item by: its text as its page writes it, and for a row
    of an Owed table ("phase timestamps | #1010") its first cell alone, as a reader names it."""
    names = {item_key(text)}
    if " | " in text:
        names.add(item_key(text.split(" | ", 1)[0]))
    return names


def _short(text: str, limit: int = 60) -> str:
    """An item in a message: whole words, an ellipsis where it is cut."""
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:(") + "…"


def named_items(bodies: Iterable[str]) -> set[str]:
    """The owed items the `owed-unowned` notes' bodies name, one a line."""
    return {item_key(line) for body in bodies for line in body.splitlines() if item_key(line)}


def check_high_water(
    texts: dict[str, str],
    active: dict,
    emit: Emit,
    issue_owner: Callable[[int], str | None],
    config_file: str,
    raised: tuple[int, int] | None = None,
    named: set[str] = frozenset(),  # type: ignore[assignment]
) -> None:
    """Unowned owed items against the mark. `raised` (before, after): the change raises the
    mark; it stands only when notes tagged `owed-unowned` that the same change adds name at
    least `after - before` of the unowned items (`named`), the visible act that records new
    work nobody owns yet. Otherwise the mark only goes down."""
    if "owed-high-water" not in active:
        return
    mark = active["owed-high-water"].params["high_water"]
    count, unowned = owed_count(texts, issue_owner)
    field = "rules.owed-high-water.high_water"
    if raised is not None:
        before, after = raised
        admitted = [u for u in unowned if item_names(u[2]) & named]
        if after - before <= len(admitted) and after <= count:
            mark = after
        else:
            why = (
                f"notes tagged {UNOWNED_TAG} in this change name {len(admitted)} of the unowned items"
                if named
                else f"no note tagged {UNOWNED_TAG} in this change names the new unowned items"
            )
            emit(
                "owed-high-water",
                config_file,
                f"rules.owed-high-water.high_water raised from {before} to {after}; the mark only goes down "
                f"unless the change names each new unowned item ({why})",
                field=field,
                fix=f"set it back to {before} (or lower) and give the new owed items owners or issues with owners; "
                f"or, to record work nobody owns yet, add in the same change a note tagged {UNOWNED_TAG} whose "
                "body names each new unowned item, one a line, as its page writes it (a table row by its first "
                "cell); unowned now: " + "; ".join(_short(t.split(" | ", 1)[0]) for _, _, t in unowned[:8]),
            )
            return
    if count > mark:
        listed = "; ".join(f"{p}:{line} {_short(text)}" for p, line, text in unowned[:8])
        more = f" and {len(unowned) - 8} more" if len(unowned) > 8 else ""
        emit(
            "owed-high-water",
            config_file,
            f"{count} unowned owed items, above the high-water mark of {mark}: {listed}{more}",
            field=field,
        )
    elif count < mark:
        emit(
            "owed-high-water",
            config_file,
            f"{count} unowned owed items, below the high-water mark of {mark}; the mark only goes down",
            field=field,
            fix=f"set rules.owed-high-water.high_water to {count} in ledger.yaml in this change",
        )
