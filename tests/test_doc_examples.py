"""Every example in README.md and docs/ marked runnable runs as written, against a live server.

A fenced block (` ```sh ` or ` ```python `) preceded by the line `<!-- runnable -->` runs in a
fresh context: the test creates one and exports `MORPHZ_URL`, `MORPHZ_TOKEN` and
`MORPHZ_CONTEXT` for it (what docs/agents.md §1 tells a reader to export), with the
repository as the working directory and `DATABASE_URL` naming the test database (so
`.venv/bin/python manage.py ...` reaches the same server). `<!-- runnable with the demo -->`
loads the demo first and exports its token and slug instead. Shell blocks run under
`bash -euo pipefail`, Python blocks with `.venv/bin/python`; a block passes when it exits 0.
CONTRIBUTING.md says how to mark a block.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from morphz.devserver import database_url
from tests.api.live import unthrottled  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- runnable( with the demo)? -->\n```(\w+)\n(.*?)^```$", re.M | re.S)
ANY_MARKER = re.compile(r"^<!-- runnable.*-->$", re.M)
RUNNERS = {"sh": ["bash", "-euo", "pipefail", "-c"], "python": [sys.executable, "-c"]}


@dataclass(frozen=True)
class Example:
    page: str
    line: int
    language: str
    code: str
    demo: bool

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in MARKER.finditer(text):
            line = text.count("\n", 0, match.start()) + 2  # the fence's line
            name = str(page.relative_to(ROOT))
            found.append(Example(name, line, match[2], match[3], bool(match[1])))
    return found


def test_every_marker_stands_before_a_runnable_fence() -> None:
    # A marker before a ```lisp block, or with a blank line after it, would run nothing.
    for page in PAGES:
        text = page.read_text()
        markers = len(ANY_MARKER.findall(text))
        runnable = [m for m in MARKER.finditer(text) if m[2] in RUNNERS]
        assert markers == len(runnable), f"{page.name}: a runnable marker runs nothing"


def test_the_newcomer_paths_are_covered() -> None:
    pages = {example.page for example in examples()}
    # The README's first transaction in a new context, the agents page's scripted agent.
    assert {"README.md", "docs/agents.md"} <= pages


@pytest.mark.usefixtures("unthrottled")
@pytest.mark.parametrize("example", examples(), ids=str)
def test_the_example_runs_as_written(
    example: Example, live_server: Any, transactional_db: Any, tmp_path: Path
) -> None:
    from django.db import connection

    if example.demo:
        from memory.demo.player import load_demo

        token, slug = load_demo(tmp_path).token, "demo"
        assert token
    else:
        slug = "doc-example"
        token = issue_token(create_context(slug)).raw
    env = {k: v for k, v in os.environ.items() if not k.startswith("MORPHZ_")}
    env.update(
        MORPHZ_URL=live_server.url,
        MORPHZ_TOKEN=token,
        MORPHZ_CONTEXT=slug,
        DATABASE_URL=database_url(connection.settings_dict),
        LOG_LEVEL="WARNING",
    )
    done = subprocess.run(
        [*RUNNERS[example.language], example.code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, (
        f"{example} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    )
