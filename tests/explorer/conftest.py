"""Browser tests: Debian's Chromium driven by Playwright against a real ASGI server.

The server is `uvicorn morphz.asgi:application` in a subprocess pointed at the test database,
so HTTP, websockets and the after-commit broadcasts run exactly as in production. Writes that
must reach open pages go through that server's REST API (its in-memory channel layer lives
in the server process). Data for first paint may be written directly with `memory` functions:
`transactional_db` commits it, so the server sees it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.served import ServedApp, served_app

# Playwright's sync API keeps an event loop in this thread; the ORM calls the tests make
# between browser steps are ordinary blocking calls, so Django's async guard is relaxed here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

REPO = Path(__file__).resolve().parents[2]
CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "correct horse battery staple"


def chromium_path() -> str | None:
    configured = os.environ.get("MORPHZ_CHROMIUM")
    for candidate in ([configured] if configured else []) + list(CHROMIUM_CANDIDATES):
        if candidate and Path(candidate).exists():
            return candidate
    return shutil.which("chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/explorer" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """Headless Chromium for the explorer's tests. Package scope: while Playwright's sync API
    is open, its event loop counts as running in the main thread and asyncio.run() fails
    there, so the browser closes when the explorer's tests are done (pytest-django runs
    tests without a database last, after these)."""
    path = chromium_path()
    if path is None:
        message = "Chromium not found: apt-get install -y chromium (or set MORPHZ_CHROMIUM)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)  # in CI a missing browser is a failure, never a skip
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


LiveServer = ServedApp


@pytest.fixture(scope="session")
def asgi_server(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    with served_app(tmp_path_factory.mktemp("server") / "uvicorn.log", "/admin/login/") as app:
        yield app


@pytest.fixture
def staff_user(transactional_db: Any) -> Any:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(
        "reviewer", "reviewer@example.invalid", PASSWORD, is_staff=True
    )


class ExplorerPage:
    """One signed-in browser tab on the explorer, with the checks the tests share."""

    def __init__(self, page: Any, server: LiveServer) -> None:
        self.page = page
        self.server = server
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))

    def login(self, username: str, password: str, next_path: str) -> None:
        self.page.goto(f"{self.server.url}/admin/login/?next={next_path}")
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", password)
        self.page.click("input[type=submit]")
        self.page.wait_for_url(f"**{next_path}")

    def open_context(self, slug: str) -> None:
        if not self.page.url.endswith(f"/contexts/{slug}/"):
            self.page.goto(f"{self.server.url}/contexts/{slug}/")
        self.page.wait_for_selector("#live-status[data-state=live]", timeout=20_000)

    def graph(self, selector: str = "node.frame") -> list[dict[str, Any]]:
        """The nodes Cytoscape draws (the instance hangs off its container)."""
        return self.page.evaluate(
            """(selector) => document.getElementById('graph')._cyreg.cy.$(selector).map(n => ({
                id: n.data('fid') || n.data('ref'), status: n.data('status'), label: n.data('label'),
                protected: n.hasClass('protected'), classes: n.classes() }))""",
            selector,
        )

    def edges(self) -> list[dict[str, Any]]:
        return self.page.evaluate(
            """() => document.getElementById('graph')._cyreg.cy.edges().map(e => ({
                source: e.source().id(), target: e.target().id(), name: e.data('name') || null,
                kind: e.hasClass('relation') ? 'relation' : 'source' }))"""
        )

    def click_frame(self, frame_id: str) -> None:
        """Click the frame's node on the canvas, where a person would."""
        box = self.page.locator("#graph").bounding_box()
        position = self.page.evaluate(
            """(id) => { const cy = document.getElementById('graph')._cyreg.cy;
                const node = cy.getElementById('f:' + id);
                cy.center(node);
                return node.renderedPosition(); }""",
            frame_id,
        )
        self.page.mouse.click(box["x"] + position["x"], box["y"] + position["y"])
        self.page.wait_for_function(
            "(id) => document.getElementById('frame-title').textContent === id", arg=frame_id
        )
        self.page.wait_for_selector("#frame-history li[data-revision]")


@pytest.fixture
def explorer(browser: Any, asgi_server: LiveServer) -> Iterator[ExplorerPage]:
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(15_000)  # a shared test machine can be slow to answer
    wrapper = ExplorerPage(page, asgi_server)
    try:
        yield wrapper
    finally:
        context.close()
    assert not wrapper.errors, f"script errors on the page: {wrapper.errors}"


@pytest.fixture
def reviewer_page(explorer: ExplorerPage, staff_user: Any) -> ExplorerPage:
    explorer.login("reviewer", PASSWORD, "/")
    return explorer


@dataclass
class Team:
    """A small context for one test, and an agent's API client to change it live."""

    slug: str
    context_id: int
    client: httpx.Client

    def commit(self, text: str) -> httpx.Response:
        return self.client.post(f"/api/v1/contexts/{self.slug}/transactions/", json={"text": text})

    def observe_and_evaluate(self, content: str) -> dict[str, Any]:
        self.client.post(
            f"/api/v1/contexts/{self.slug}/events/",
            json={"kind": "external_fact", "content": content},
        ).raise_for_status()
        response = self.client.post(f"/api/v1/contexts/{self.slug}/evaluations/", json={})
        response.raise_for_status()
        return dict(response.json())


@pytest.fixture
def team(transactional_db: Any, asgi_server: LiveServer) -> Iterator[Team]:
    from memory.contexts import create_context, issue_token
    from memory.tx.engine import Author, submit_transaction

    context = create_context("team", name="Release team", grace_ticks=8)
    submit_transaction(
        context.pk,
        text='(context-tx (reason "start") (derive release (goal ship-v1) (stage waiting-for-tests))'
        " (derive plan (steps test build pack)) (relate plan supports release))",
        author=Author("agent", "agent"),
    )
    client = asgi_server.api(issue_token(context, name="release-bot").raw)
    try:
        yield Team(slug=context.slug, context_id=context.pk, client=client)
    finally:
        client.close()
