"""The repository's documents stand alone: every relative link resolves, and none reaches outside the repository.

Links and headings are read with markdown-it (CommonMark, as GitHub renders it); an anchor must be
the GitHub slug of a heading of the page it points into.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

REPO = Path(__file__).resolve().parents[1]
PAGES = ("concepts", "configuration", "commands", "day-two", "team-and-clusters", "json-and-exit-codes")
PAGES += ("reliability", "providers", "performance")
# What a document may not mention: a design document outside the repository, its sections, paths beyond it.
FORBIDDEN = (
    re.compile(r"\bDESIGN\b"),
    re.compile("§"),
    re.compile(r"\.\./shared\b"),
    re.compile(r"(?<![\w.])/work/"),
)
_MARKDOWN = MarkdownIt("commonmark").enable("table")


def documents(root: Path = REPO) -> list[Path]:
    """README, ARCHITECTURE, docs/ and the Markdown pages that live beside the code they describe."""
    found = [root / "README.md", root / "ARCHITECTURE.md", *sorted((root / "docs").glob("*.md"))]
    for folder in ("benchmarks", "providers", "examples"):
        found += sorted((root / folder).rglob("*.md"))
    return found


def _inline_tokens(tokens: Iterable[Token]) -> Iterable[Token]:
    for token in tokens:
        yield token
        yield from _inline_tokens(token.children or ())


def _plain(token: Token) -> str:
    return "".join(child.content for child in token.children or () if child.type in ("text", "code_inline"))


def slug(text: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of every heading of ``path``; a repeated heading gets ``-1``, ``-2``... as on GitHub."""
    tokens = _MARKDOWN.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for opening, inline in pairwise(tokens):
        if opening.type != "heading_open":
            continue
        base = slug(_plain(inline))
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def links(path: Path) -> list[str]:
    tokens = _MARKDOWN.parse(path.read_text(encoding="utf-8"))
    found = []
    for token in _inline_tokens(tokens):
        if token.type == "link_open":
            found.append(str(token.attrs["href"]))
        elif token.type == "image":
            found.append(str(token.attrs["src"]))
    return found


def problems(path: Path, root: Path = REPO) -> list[str]:
    """Every link of ``path`` that does not resolve inside ``root``, and every forbidden mention."""
    found = []
    text = path.read_text(encoding="utf-8")
    for pattern in FORBIDDEN:
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.relative_to(root)}:{line}: mentions {match.group()!r}")
    for href in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", href, flags=re.I):  # http:, https:, mailto: ...
            if href.lower().startswith("file:"):
                found.append(f"{path.relative_to(root)}: links to a local file {href}")
            continue
        target, _, anchor = href.partition("#")
        if target.startswith("/"):
            found.append(f"{path.relative_to(root)}: absolute path {href}")
            continue
        resolved = (path.parent / target).resolve() if target else path
        if not resolved.is_relative_to(root.resolve()):
            found.append(f"{path.relative_to(root)}: {href} is outside the repository")
        elif not resolved.exists():
            found.append(f"{path.relative_to(root)}: {href} does not exist")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            found.append(f"{path.relative_to(root)}: {href} names no heading of {resolved.relative_to(root)}")
    return found


def test_every_link_resolves_and_nothing_points_outside_the_repository() -> None:
    pages = documents()
    assert len(pages) > 12
    found = [problem for page in pages for problem in problems(page)]
    assert found == [], "\n".join(found)


def test_the_docs_have_a_page_per_topic_and_the_readme_links_each() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    index = (REPO / "docs" / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert (REPO / "docs" / f"{page}.md").is_file(), page
        assert f"](docs/{page}.md)" in readme, page
        assert f"]({page}.md)" in index, page
    assert "](benchmarks/RESULTS.md)" in readme
    assert "](../benchmarks/RESULTS.md)" in (REPO / "docs" / "performance.md").read_text(encoding="utf-8")


def test_the_readme_stays_short() -> None:
    assert len((REPO / "README.md").read_bytes()) < 16000


def test_results_name_their_commit_and_machine() -> None:
    results = (REPO / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
    assert re.search(r"[Mm]easured at commit `[0-9a-f]{7,40}`", results)
    assert "**Machine**" in results
    assert re.search(r"^\| case \|", results, flags=re.M)


def test_the_checker_finds_what_it_must(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "other.md").write_text("# Other\n\n## Team `state` — shared\n\n## Team `state` — shared\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n## Two words\n\n"
        "[ok](../other.md) [ok](../other.md#team-state--shared) [ok](../other.md#team-state--shared-1) "
        "[ok](#two-words) [ok](https://example.com/x#y)\n\n"
        "[bad](../missing.md) [bad](../other.md#nowhere) [bad](#three-words) [bad](../../outside.md) "
        "[bad](/etc/passwd) ![bad](img.png)\n\n"
        "See DESIGN §3 and ../shared/DESIGN.md, or /work/main.\n"
    )
    found = problems(page, tmp_path)
    assert found == [
        "docs/page.md:9: mentions 'DESIGN'",
        "docs/page.md:9: mentions 'DESIGN'",
        "docs/page.md:9: mentions '§'",
        "docs/page.md:9: mentions '../shared'",
        "docs/page.md:9: mentions '/work/'",
        "docs/page.md: ../missing.md does not exist",
        "docs/page.md: ../other.md#nowhere names no heading of other.md",
        "docs/page.md: #three-words names no heading of docs/page.md",
        "docs/page.md: ../../outside.md is outside the repository",
        "docs/page.md: absolute path /etc/passwd",
        "docs/page.md: img.png does not exist",
    ]


def test_the_performance_page_has_a_row_for_every_benchmark_case() -> None:
    from benchmarks.__main__ import CASES

    page = (REPO / "docs" / "performance.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z0-9][a-z0-9-]*)` \|", page, flags=re.M))
    assert rows == {case.name for case in CASES}
