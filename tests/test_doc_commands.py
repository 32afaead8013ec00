"""Commands in the README, docs/ and the explorer's pages are the form that works from a
fresh clone: the project's own interpreter (`.venv/bin/python manage.py ...`). A bare
`python manage.py` outside the virtual environment ends in `No module named 'pgserver'`."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "templates").rglob("*.html")),
    *sorted((ROOT / "static" / "explorer").glob("*.js")),
]
# `python` as a command word, not the tail of `.venv/bin/python`: the project's scripts.
BARE = re.compile(r"(?<![\w/.-])python3? (?:manage\.py|-m morphz_client)")


def test_no_page_tells_a_reader_to_run_a_bare_python() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}: {line.strip()}"
        for page in PAGES
        for number, line in enumerate(page.read_text().splitlines(), 1)
        if BARE.search(line)
    ]
    assert found == []


def test_the_pattern_tells_the_two_forms_apart() -> None:
    assert BARE.search("run `python manage.py migrate`")
    assert BARE.search("<code>python -m morphz_client.chat</code>")
    assert not BARE.search("`.venv/bin/python manage.py migrate`")
