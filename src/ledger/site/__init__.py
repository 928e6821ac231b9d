"""The site: the ledger rendered as Markdown pages that MkDocs-Material builds.

    from ledger.site import build_site
    result = build_site(Ledger.open("."), out=None, strict=True, progress=None)
    result.site_dir, result.pages, result.generation_s, result.mkdocs_s

One renderer module per page kind (home, decisions, report, sandwiches, specs, records,
hypotheses, charts) fills a Jinja2 template from `ledger/templates/site/`; `builder`
writes the pages, runs MkDocs and checks the links of what it built.
"""

from __future__ import annotations

from .builder import SiteCheckFailed, SiteResult, build_site, generate

__all__ = ["build_site", "generate", "SiteResult", "SiteCheckFailed"]
