"""MkDocs' two costly steps per page, remembered between builds: Markdown to HTML
(`Page.render`, Python-Markdown) and the search entries of the page's HTML
(MkDocs-Material's `SearchIndex.add_entry_from_context`, `html.parser`).

Everything else MkDocs does runs as always, on every page: the navigation, the theme's
`main.html`, the anchors check, the search index file, every plugin event. Only the result of
a step whose inputs are the same as a build saw before is taken from the cache
(`build_cache.BuildCache`, beside the build lock, outside the work tree):

- a page's HTML is keyed by its Markdown (after the `page_markdown` events), its source and
  destination paths and URL, whether it is excluded, MkDocs' Markdown settings (extensions and
  their configs, URLs, validation), mkdocs.yml's text, and the versions of MkDocs,
  Python-Markdown, pymdown-extensions and MkDocs-Material. The links it resolved are its
  dependencies: each path it looked up and what it found (the file's URL, or nothing, and
  whether that file is excluded) is kept beside the HTML and checked against this build's
  files before the HTML is used, so a page that links to a record page that appeared, moved
  or left is rendered again. The warnings the render logged are kept and logged again, so
  `--strict` sees the same warnings from a remembered page as from a rendered one.
- a page's search entries are keyed by its HTML, table of contents, URL, title and front
  matter.

What MkDocs' own `--dirty` does instead (rebuild the pages whose Markdown is newer than their
HTML, by modification time) leaves every other page's navigation and the search index
stale (mkdocs#2220, mkdocs#4047, mkdocs-material#7638); here every page is written in full by
MkDocs, so the result is the same bytes as a build without the cache.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from .build_cache import BuildCache, key

_PACKAGES = ("mkdocs", "markdown", "pymdown-extensions", "mkdocs-material")


def settings_of(config: Any, mkdocs_yml_text: str) -> str:
    """What every page's HTML depends on beyond the page itself."""
    versions = []
    for name in _PACKAGES:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            versions.append((name, ""))
    shown = {
        name: repr(config.get(name))
        for name in ("markdown_extensions", "mdx_configs", "use_directory_urls", "validation", "docs_dir")
    }
    return repr((versions, sorted(shown.items()), mkdocs_yml_text))


def _toc_tokens(items) -> list:
    return [(item.level, item.id, item.title, _toc_tokens(item.children)) for item in items]


def _toc_dicts(tokens) -> list[dict]:
    return [{"level": lv, "id": i, "name": n, "children": _toc_dicts(c)} for lv, i, n, c in tokens]


def _found(files, path: str) -> tuple:
    target = files.get_file_from_path(path)
    if target is None:
        return (path, None, False)
    return (path, target.url, bool(target.inclusion.is_excluded()))


class _Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.logged: list[tuple[int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.logged.append((record.levelno, record.getMessage()))


def _apply(page, files, entry: tuple, page_log: logging.Logger) -> bool:
    """Give `page` the remembered render `entry` when every link it resolved still resolves
    the same way; False (nothing changed on the page) when not, or not of this shape."""
    from mkdocs.structure.toc import get_toc

    try:
        content, toc, title, anchors, to_anchors, deps, logged = entry
        if not all(_found(files, d[0]) == tuple(d) for d in deps):
            return False
        links: dict | None = None
        if to_anchors is not None:
            links = {}
            for src, anchor, url in to_anchors:
                target = files.get_file_from_path(src)
                if target is None:
                    return False  # not the files it was rendered with
                links.setdefault(target, {})[anchor] = url
        toc_items = get_toc(_toc_dicts(toc))
    except (TypeError, ValueError):
        return False
    page.content = content
    page.toc = toc_items
    page._title_from_render = title
    page.present_anchor_ids = set(anchors)
    if links is not None:
        page.links_to_anchors = links
    for level, message in logged:
        page_log.log(level, message)
    return True


@contextmanager
def remembering(cache: BuildCache) -> Iterator[None]:
    """For the duration of one in-process MkDocs build: `Page.render` and the search plugin's
    `add_entry_from_context` answer from `cache` where their inputs are unchanged."""
    from mkdocs.structure import pages as mk_pages
    from mkdocs.structure.files import Files

    page_log = mk_pages.log
    original_render = mk_pages.Page.render
    original_lookup = Files.get_file_from_path

    def render(page, config, files) -> None:
        digest = key(
            "render",
            page.file.src_uri,
            page.file.dest_uri,
            page.file.url,
            repr(bool(page.file.inclusion.is_excluded())),
            page.markdown or "",
        )
        entry = cache.get(digest)
        if entry is not None and _apply(page, files, entry, page_log):
            return
        looked: dict[str, None] = {}

        def lookup(self, path):
            looked[path] = None
            return original_lookup(self, path)

        recorder = _Recorder()
        page_log.addHandler(recorder)
        Files.get_file_from_path = lookup
        try:
            original_render(page, config, files)
        finally:
            Files.get_file_from_path = original_lookup
            page_log.removeHandler(recorder)
        to_anchors = getattr(page, "links_to_anchors", None)
        cache.put(
            digest,
            (
                page.content,
                _toc_tokens(page.toc),
                page._title_from_render,
                tuple(sorted(page.present_anchor_ids or ())),
                None
                if to_anchors is None
                else tuple((f.src_uri, a, u) for f, links in to_anchors.items() for a, u in links.items()),
                tuple(_found(files, p) for p in looked),
                tuple(recorder.logged),
            ),
        )

    def unhook() -> None:
        mk_pages.Page.render = original_render

    mk_pages.Page.render = render
    search = _hook_search(cache)
    try:
        yield
    finally:
        unhook()
        search()


def _hook_search(cache: BuildCache):
    """Remember the search entries of each page; returns the function that undoes the hook."""
    try:
        from material.plugins.search.plugin import SearchIndex  # type: ignore[import-untyped]
    except ImportError:  # another theme: nothing to remember
        return lambda: None
    original = SearchIndex.add_entry_from_context

    def add_entry_from_context(self, page) -> None:
        digest = key(
            "search",
            page.content or "",
            json.dumps(_toc_tokens(page.toc)),
            page.url,
            str(page.title),
            json.dumps(page.meta, sort_keys=True, default=repr),
            json.dumps(self.config, sort_keys=True, default=repr),
        )
        entry = cache.get(digest)
        if entry is not None and len(entry) == 1 and isinstance(entry[0], str):
            self.entries.extend(json.loads(entry[0]))
            return
        before = len(self.entries)
        original(self, page)
        cache.put(digest, (json.dumps(self.entries[before:]),))

    SearchIndex.add_entry_from_context = add_entry_from_context

    def undo() -> None:
        SearchIndex.add_entry_from_context = original

    return undo
