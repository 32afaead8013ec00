"""The README and docs/ stand alone: every link and named path is inside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from memory.errors import ErrorCode

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Backticked repository paths in the docs: `memory/tx/engine.py`, `tests/api/`, ...
REPO_PATH = re.compile(
    r"`((?:memory|api|explorer|client|morphz|tests|bench|static|templates|docs)/[\w./-]*)`"
)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_point_inside_the_repository(page: Path) -> None:
    for target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "#")):
            continue
        resolved = (page.parent / target.split("#")[0]).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name} links outside the repository: {target}"
        assert resolved.exists(), f"{page.name} links to a missing file: {target}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_named_paths_exist(page: Path) -> None:
    text = page.read_text()
    assert "../shared" not in text
    missing = [p for p in REPO_PATH.findall(text) if not (ROOT / p).exists()]
    assert missing == [], f"{page.name} names paths that do not exist"


def test_the_rules_index_covers_every_rule() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    listed = set(re.findall(r"^\| (R\d+) \|", text, re.M))
    assert listed == {f"R{n}" for n in range(1, 69)}


def test_every_error_code_is_documented() -> None:
    text = "\n".join(page.read_text() for page in DOCS)
    undocumented = [code for code in ErrorCode if f"`{code}`" not in text]
    assert undocumented == []


def test_the_docs_give_each_error_code_its_status() -> None:
    """A status table row (`| 405, 406 | `method_not_allowed`, ...`) or a mention like
    "409 `conflict`" names the status the code declares in ErrorCode."""
    status = {code.value: code.status for code in ErrorCode}
    wrong = []
    for page in PAGES:
        text = page.read_text()
        for row in re.finditer(r"^\| ([\d, ]+) \| ([^|]*) \|", text, re.M):
            said = {int(n) for n in re.findall(r"\d{3}", row.group(1))}
            for code in re.findall(r"`(\w+)`", row.group(2)):
                if code in status and status[code] not in said:
                    wrong.append(f"{page.name}: {code} under {row.group(1).strip()}")
        for said_status, code in re.findall(r"\b([1-5]\d\d) `(\w+)`", text):
            if code in status and status[code] != int(said_status):
                wrong.append(f"{page.name}: {said_status} `{code}`")
    assert wrong == []


def _outside_parentheses(text: str) -> str:
    """`text` without its parenthesised notes (nested ones, and links inside them, too)."""
    kept, depth = [], 0
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0:
            kept.append(char)
    return "".join(kept)


def test_the_rest_status_table_lists_every_error_code_and_no_other() -> None:
    """docs/rest.md's status table names each ErrorCode once, and only ErrorCode members (the
    backticked words of its codes column, outside the notes in parentheses)."""
    text = (ROOT / "docs" / "rest.md").read_text()
    section = text.split("\n## Errors\n", 1)[1].split("\n## ", 1)[0]
    listed = [
        code
        for row in re.finditer(r"^\| ([\d, ]+) \| ([^|]*) \|", section, re.M)
        for code in re.findall(r"`(\w+)`", _outside_parentheses(row.group(2)))
    ]
    declared = {code.value for code in ErrorCode}
    assert sorted(declared - set(listed)) == [], "codes missing from the table"
    assert sorted(set(listed) - declared) == [], "the table names codes ErrorCode does not"
    assert len(listed) == len(set(listed)), "a code listed twice"


def test_the_rest_endpoint_table_names_every_query_parameter_of_its_reads() -> None:
    """docs/rest.md's endpoint table names each query parameter the schema gives a GET it
    lists (before, search's `cursor` and the frame list's `source` were nowhere on the page
    a client reads). `min_version` is every read's, given once under Basics."""
    from drf_spectacular.generators import SchemaGenerator

    text = (ROOT / "docs" / "rest.md").read_text()
    rows = dict(re.findall(r"^\| `GET ([^`]*)` \|[^|]*\|([^|]*)\|$", text, re.M))
    schema = SchemaGenerator().get_schema(request=None, public=True)
    prefix = "/api/v1/contexts/{slug}/"
    missing = {}
    for path, operations in schema["paths"].items():
        listed = rows.get(path.removeprefix(prefix) or ".") if path.startswith(prefix) else None
        if listed is None or "get" not in operations:
            continue
        names = [p["name"] for p in operations["get"].get("parameters", []) if p["in"] == "query"]
        left_out = [n for n in names if n != "min_version" and f"`{n}`" not in listed]
        if left_out:
            missing[path] = left_out
    assert rows and missing == {}


def test_the_readme_lists_every_docs_page() -> None:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    unlisted = [p.name for p in DOCS if f"](docs/{p.name})" not in section]
    assert unlisted == []


def test_the_readme_layout_names_every_top_level_folder() -> None:
    # The repository's folders, not the working directory's: a data folder a person keeps
    # inside the checkout (or an untracked build output) is not part of the layout.
    text = (ROOT / "README.md").read_text()
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    folders = {path.split("/", 1)[0] for path in tracked if "/" in path}
    missing = [
        name for name in sorted(folders) if not name.startswith(".") and f"`{name}/" not in layout
    ]
    assert missing == []
