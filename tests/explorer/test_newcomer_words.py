"""Small words a newcomer trips on, as the browser shows them: a JSON error in the body
editor said once and readably, "1 source" (not "1 sources"), the evaluation dialog's frame
ids and event refs really links, and the context list's last column inside a 1280 px window."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memory.contexts import create_context
from memory.demo.player import load_demo
from tests.explorer.conftest import ExplorerPage, Team
from tests.explorer.test_tryout_fixes import save_body

LAPTOP = {"width": 1280, "height": 720}


def test_a_json_error_in_the_body_editor_is_said_once_and_readably(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    reviewer_page.open_context(team.slug)
    shown = save_body(reviewer_page, "json", '{"goal": "ship-v1",}')
    assert shown.count("line 1, column") == 1, shown
    assert "expected Expecting" not in shown


def test_the_hover_says_1_source(reviewer_page: ExplorerPage, team: Team) -> None:
    team.commit("(context-tx (derive note (from release) (x 1)))").raise_for_status()
    reviewer_page.open_context(team.slug)
    reviewer_page.page.wait_for_function(
        "() => document.getElementById('graph')._cyreg.cy.$('#f\\\\:note').nonempty()"
    )
    tip = reviewer_page.page.evaluate(
        """() => { const cy = document.getElementById('graph')._cyreg.cy;
            cy.getElementById('f:note').emit('mouseover');
            return document.getElementById('graph-tip').innerText; }"""
    )
    assert "1 source · 0 relations" in tip


def test_the_evaluation_dialog_links_what_it_says_it_links(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")
    page = explorer.page
    page.wait_for_selector("#evaluations li button")
    page.click("#evaluations li button")
    page.wait_for_selector("#evaluation-text")
    text = page.inner_text("#evaluation-text")
    links = page.eval_on_selector_all(
        "#evaluation-text button.ref", "bs => bs.map(b => b.textContent)"
    )
    lines = text.splitlines()
    frames = [line.split()[1] for line in lines if line.startswith("[frame ")]
    assert frames and set(frames) <= set(links)
    # Every event ref of a header line (an observation's, a frame's sources) is a link ...
    header_refs = [
        ref for line in lines if line.startswith("[") for ref in re.findall(r"@e\d+", line)
    ]
    assert header_refs and sorted(header_refs) == sorted(x for x in links if x.startswith("@e"))
    # ... and so are both ends of each relation line.
    relations: list[str] = []
    for line in lines[lines.index("## relations") + 1 :] if "## relations" in lines else []:
        if line.startswith("## "):
            break
        if line.strip():
            relations.append(line)
    ends = [end for line in relations for end in (line.split()[0], line.split()[-1])]
    assert relations and set(ends) <= set(links), text
    # A link looks like one (the page's link colour, underlined) and opens what it names.
    style = page.eval_on_selector(
        "#evaluation-text button.ref",
        "b => [getComputedStyle(b).textDecorationLine, getComputedStyle(b).cursor]",
    )
    assert style == ["underline", "pointer"]
    page.click(f"#evaluation-text button.ref[data-ref='{frames[0]}']")
    page.wait_for_function(
        "(id) => document.getElementById('frame-title').textContent === id", arg=frames[0]
    )


def test_the_context_list_fits_a_1280_window(explorer: ExplorerPage, staff_user: Any) -> None:
    for n in range(3):
        # A name without spaces cannot wrap at a space.
        create_context(f"release-team-{n}", name="releasing_shop_web_and_web_" * 7)
    explorer.page.set_viewport_size(LAPTOP)
    explorer.login("reviewer", "correct horse battery staple", "/")
    sizes = explorer.page.evaluate(
        """() => ({ width: window.innerWidth, scroll: document.documentElement.scrollWidth,
            last: document.querySelector('#context-list th:last-child').getBoundingClientRect().right })"""
    )
    assert sizes["last"] <= sizes["width"] and sizes["scroll"] <= sizes["width"], sizes
