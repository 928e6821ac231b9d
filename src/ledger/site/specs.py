"""Spec pages: Markdown with YAML front matter from the ledger's specs folder.

The front matter's owed items, hypotheses and gates become escaped tables. The body is
the user's own Markdown, so it is rendered by markdown-it-py from the tokens the page rules
judged (`ledger.pages.markdown.body_tokens`: raw HTML off, shown as text; link validation on,
so `javascript:`, `vbscript:`, `data:` links are dropped), then embedded as HTML: MkDocs' Python-Markdown has no safe mode. Links in that
HTML are checked after the build by `linkcheck`.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from markdown.extensions.toc import slugify
from markdown_it.renderer import RendererHTML
from markupsafe import Markup

from ..analysis.keyed import issue_closed, settled
from ..errors import InputError, Problem
from ..pages import front_matter, owed_items
from ..pages.markdown import body_tokens, parser
from ..store.ledger import lstat_chain, read_nofollow, symlink_error, walk_nofollow
from .context import Page, SiteData, Spec
from .escape import clip, md_code, md_inline
from .home import contract_page

INDEX = "specs/index.md"
KNOWN_KEYS = ("title", "owed", "hypotheses", "gates")


def read_specs(specs_dir: Path, root: Path) -> list[Spec]:
    """Every `*.md` under the specs folder, front matter parsed (a bad one raises InputError)."""

    specs: list[Spec] = []
    link = lstat_chain(root, specs_dir)
    if link is not None:
        raise symlink_error(str(Path(link).relative_to(root)))
    if not specs_dir.is_dir():
        return specs
    problems = []
    for path in _pages(specs_dir, root):
        rel = path.relative_to(specs_dir).with_suffix("").as_posix()
        # Never through a link (the walk refused links; O_NOFOLLOW refuses one swapped in since).
        text = read_nofollow(str(path), 1 << 24).decode("utf-8")
        try:
            fm = front_matter(text)
        except ValueError as exc:
            problems.append(
                Problem(
                    str(path.relative_to(root)),
                    str(exc).split(":")[0],
                    str(exc).split(": ", 1)[-1],
                    "fix the YAML between the --- fences",
                )
            )
            continue
        specs.append(
            Spec(
                name=rel,
                source=path.relative_to(root).as_posix(),
                front=_plain(fm.data),
                body=fm.body,
                body_line=fm.body_line + 1,
            )
        )
    if problems:
        raise InputError(f"{len(problems)} spec page(s) with bad front matter; nothing was built", problems)
    return specs


def _pages(specs_dir: Path, root: Path) -> list[Path]:
    """`*.md` under the specs folder, from the entries' own types: a symlink anywhere in the
    folder is refused (UnreadableRecord, rule `symlinks`), never followed, so no page can
    publish a file from outside the repository."""

    files, links = walk_nofollow(specs_dir)
    if links:
        raise symlink_error(links[0].relative_to(root).as_posix())
    return [p for p in files if p.suffix == ".md"]


def _plain(node: Any) -> Any:
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def page_of(spec: Spec) -> str:
    return f"specs/{spec.name}.md"


def _items(value: Any, key: str) -> list[dict[str, Any]]:
    """Front matter lists may hold strings or mappings; both become mappings."""
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    return [v if isinstance(v, dict) else {key: v} for v in value]


def _evidence(data: SiteData, page: str, item: dict[str, Any]) -> Markup:
    ids = item.get("evidence") or item.get("records") or []
    if isinstance(ids, str):
        ids = [ids]
    if not ids:
        return Markup("–")
    return Markup(", ").join(data.link(str(i), page) if str(i) in data.by_id else md_code(i) for i in ids)


@lru_cache(maxsize=1)
def _renderer() -> RendererHTML:
    """markdown-it's HTML renderer, with heading ids as MkDocs makes them. It renders the
    tokens `ledger.pages.markdown.body_tokens` returns: the very parse the page rules and
    `ledger status` judged, so the site shows nothing the checker did not read."""

    renderer = RendererHTML()

    def heading_open(tokens, idx, options, env):
        # Ids as MkDocs' toc extension makes them, so `page.md#7-owed` links keep working.
        inline = tokens[idx + 1]
        text = "".join(c.content for c in inline.children or () if c.type in ("text", "code_inline"))
        seen = env.setdefault("ids", set())
        base = slugify(text, "-") or "section"
        slug, n = base, 1
        while slug in seen:
            slug, n = f"{base}_{n}", n + 1
        seen.add(slug)
        attrs = {**tokens[idx].attrs, "id": slug}
        # The shared tokens are read-only: render a copy of the heading with its id.
        # (the inline token after it tells renderToken not to break the line).
        return renderer.renderToken([tokens[idx].copy(attrs=attrs), inline], 0, options, env)

    renderer.rules["heading_open"] = heading_open  # type: ignore[assignment]
    return renderer


_HREF = re.compile(r'(href|src)="([^"]*)"')
#: A heading markdown-it rendered, with the id `heading_open` gave it.
_HEADING = re.compile(r'<h([1-6]) id="([^"]*)">(.*?)</h\1>', re.DOTALL)
_FIRST_H1 = re.compile(r"\s*<h1[^>]*>(.*?)</h1>\s*", re.DOTALL)


def _text_of(fragment: str) -> str:

    return html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()


def body_html(spec: Spec, directory_urls: bool = True) -> str:
    """The spec's body as HTML with raw HTML escaped and unsafe links dropped."""
    html = _renderer().render(list(body_tokens(spec.body)), parser().options, {})
    page_dir = posixpath.dirname(page_of(spec))

    def fix(match: re.Match) -> str:
        attr, href = match.group(1), match.group(2)
        if "://" in href or href.startswith(("#", "/", "mailto:")):
            return match.group(0)
        path, _, anchor = href.partition("#")
        if not path.endswith(".md"):
            return match.group(0)
        # A link to another Markdown page, written relative to the spec's source folder:
        # point it at the page MkDocs builds from it.
        target = posixpath.normpath(posixpath.join(page_dir, path))
        if directory_urls:
            base = target[:-3]
            url_target = (posixpath.dirname(base) + "/") if base.endswith("/index") or base == "index" else base + "/"
            own = page_of(spec)[:-3] + "/"
            rel = posixpath.relpath(url_target or ".", own) + "/"
        else:
            rel = posixpath.relpath(target[:-3] + ".html", page_dir)
        return f'{attr}="{rel}{"#" + anchor if anchor else ""}"'

    html = _HREF.sub(fix, html)
    # The page's own heading already says the title: a body opening with the same H1 would
    # repeat it.
    title = str(spec.front.get("title") or "").strip()
    first = _FIRST_H1.match(html)
    if first and (not title or _text_of(first.group(1)) == title):
        html = html[first.end() :]
    return _with_toc_headings(html.strip())


def _with_toc_headings(html: str) -> str:
    """The body's HTML, its headings lifted out as Markdown headings with the same ids.

    MkDocs builds the table of contents from Markdown headings only; headings inside a raw
    HTML block (`markdown="0"`, so that nothing in the user's text is parsed twice) would be
    missing from it. Between headings, the HTML stays as markdown-it rendered it.
    """
    parts: list[str] = []
    at = 0

    def block(fragment: str) -> None:
        if fragment.strip():
            parts.append(f'<div class="ledger-spec" markdown="0">\n{fragment.strip()}\n</div>')

    for match in _HEADING.finditer(html):
        block(html[at : match.start()])
        level, slug, inner = int(match.group(1)), match.group(2), match.group(3)
        text = _text_of(inner) or slug
        parts.append(f"{'#' * level} {md_inline(text)} {{#{slug}}}")
        at = match.end()
    block(html[at:])
    return "\n\n".join(parts)


def _body_title(spec: Spec) -> str | None:
    for line in spec.body.splitlines():
        if line.startswith("# "):
            return line[2:].strip() or None
        if line.strip():
            return None
    return None


def _readable(value: Any) -> str:
    """A front-matter value in the words its YAML was written in, never Python's repr:
    `{key: Lever}` reads "key: Lever", a list reads "a, b"."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_readable(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_readable(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return "–" if value is None else str(value)


def _front_value(data: SiteData, page: str, key: str, value: Any) -> Markup:
    """A front-matter value as the page shows it: a `contract:` (by name or id) links to
    that contract's stopping point, a record id to its record; anything else as text."""
    text = _readable(value)
    if key == "contract" and isinstance(value, str):
        named = next((c for c in data.by_kind.get("contract", []) if value in (c.id, getattr(c, "name", None))), None)
        if named is not None:
            return Markup(f"[{md_inline(text)}]({posixpath.relpath(contract_page(named.id), posixpath.dirname(page))})")
    if isinstance(value, str) and value in data.by_id:
        return data.link(value, page, text)
    return md_inline(clip(text, 200))


def _issue_numbers(issue: Any) -> list[int]:
    """A front-matter owed item's `issue:` as numbers (7, "7" or "#7")."""
    text = str(issue).lstrip("#") if issue is not None else ""
    return [int(text)] if text.isdigit() else []


def render(data: SiteData, env, directory_urls: bool = True) -> Iterator[Page]:
    template = env.get_template("spec.md.j2")
    closed = issue_closed(data.records)
    index_rows = []
    for spec in data.specs:
        page = page_of(spec)
        front = spec.front
        owed = [
            dict(o, evidence=_evidence(data, page, o), item=o.get("item") or o.get("text") or o.get("title"))
            for o in _items(front.get("owed"), "item")
        ]
        hypotheses = [
            dict(
                h,
                evidence=_evidence(data, page, h),
                statement=h.get("statement") or h.get("text"),
                status=h.get("status", "open"),
            )
            for h in _items(front.get("hypotheses"), "statement")
        ]
        gates = [
            dict(g, evidence=_evidence(data, page, g), name=g.get("name") or g.get("gate"), command=g.get("command"))
            for g in _items(front.get("gates"), "name")
        ]
        for row in owed:
            row.setdefault("owner", None)
            row.setdefault("issue", None)
        other = [(k, _front_value(data, page, k, v)) for k, v in front.items() if k not in KNOWN_KEYS]
        title = front.get("title") or _body_title(spec) or spec.name
        yield Page(
            page,
            template.render(
                data=data,
                page=page,
                spec=spec,
                title=title,
                owed=owed,
                hypotheses=hypotheses,
                gates=gates,
                other=other,
                # a spec in a subfolder of the specs folder links back up to the one index
                index_href=posixpath.relpath(INDEX, posixpath.dirname(page)),
                body_html=Markup(body_html(spec, directory_urls)),
            ),
        )
        index_rows.append(
            {
                "name": spec.name,
                "href": posixpath.relpath(page, "specs"),
                "title": title,
                # What is still owed: an item whose issues are all closed is owed no more, as
                # status and the Hypotheses page count it.
                "owed": sum(not settled(_issue_numbers(o.get("issue")), closed) for o in owed)
                + sum(not settled(item.issues, closed) for item in owed_items(spec.body, body=True)),
                "hypotheses": len(hypotheses),
                "gates": len(gates),
            }
        )
    yield Page(INDEX, env.get_template("specs_index.md.j2").render(data=data, page=INDEX, specs=index_rows))


__all__ = ["read_specs", "render", "body_html", "page_of", "md_inline"]
