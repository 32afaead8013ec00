"""Things a new user tripped over in the explorer, each checked in the browser."""

from __future__ import annotations

import json
from typing import Any

from tests.explorer.conftest import PASSWORD, ExplorerPage, LiveServer, Team


def test_events_panel_follows_a_retirement_of_an_event_it_shows(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    page = reviewer_page.page
    reviewer_page.open_context(team.slug)
    response = team.client.post(
        f"/api/v1/contexts/{team.slug}/events/",
        json={"kind": "external_fact", "content": "build 1432 is green"},
    )
    ref = response.json()["ref"]
    badge = f"#events li[data-ref='{ref}'] .tag.status"
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent === 'active'", arg=badge
    )
    assert team.commit(f'(context-tx (reason "digested") (retire {ref}))').status_code == 201
    page.wait_for_function(
        "(sel) => document.querySelector(sel)?.textContent === 'retired'", arg=badge, timeout=2000
    )


def test_a_rejected_relate_says_why_once(reviewer_page: ExplorerPage, team: Team) -> None:
    page = reviewer_page.page
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("release")
    page.fill("#relate-name", "needs")
    page.fill("#relate-object", "ghost")
    page.click("#relate-form button[type=submit]")
    page.wait_for_selector("#action-result[data-code=unknown_ref]")
    text = page.locator("#action-result").inner_text()
    assert text.count("'ghost' does not exist") == 1, text


def test_the_frame_title_stays_in_view_after_an_edit(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    page = reviewer_page.page
    page.set_viewport_size({"width": 1280, "height": 720})
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("plan")
    page.click("#btn-edit")
    body = {f"step-{n:02d}": f"do part {n} of the plan" for n in range(40)}
    page.fill("#edit-text", json.dumps(body, indent=2))
    page.click("#edit-save")
    page.wait_for_function(
        "() => document.getElementById('frame-revision').textContent === 'revision 2'"
    )
    panel = page.locator("#side-panel").bounding_box()
    title = page.locator("#frame-title").bounding_box()
    assert panel and title
    assert panel["y"] <= title["y"] and title["y"] + title["height"] <= panel["y"] + panel["height"]


def test_api_reference_renders_without_internet_and_the_favicon_exists(
    reviewer_page: ExplorerPage, asgi_server: LiveServer
) -> None:
    page = reviewer_page.page
    outside: list[str] = []

    def only_our_server(route: Any) -> None:
        if route.request.url.startswith(asgi_server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_our_server)
    page.goto(asgi_server.url + "/")
    page.click("a:text('API reference')")
    page.wait_for_url("**/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock-summary", timeout=10000)
    assert page.locator(".opblock-summary").count() > 10
    assert outside == []

    response = page.request.get(asgi_server.url + "/favicon.ico")
    assert response.ok
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in response.body()


def test_login_and_admin_say_morphz_and_explain_the_settings(
    explorer: ExplorerPage, transactional_db: Any
) -> None:
    from django.contrib.auth import get_user_model

    from memory.contexts import create_context

    get_user_model().objects.create_superuser("admin", "admin@example.invalid", PASSWORD)
    context = create_context("ops", name="Operations")
    page = explorer.page
    page.goto(explorer.server.url + "/admin/login/")
    assert "Morphz" in page.title()
    assert "Django" not in page.locator("body").inner_text()

    explorer.login("admin", PASSWORD, "/admin/memory/context/")
    page.click("a:text('open in the explorer')")
    page.wait_for_url("**/contexts/ops/")
    page.goto(f"{explorer.server.url}/admin/memory/context/{context.pk}/change/")
    help_text = page.locator("#id_grace_ticks_helptext").inner_text()
    assert "retiring frame" in help_text and "tick" in help_text
    assert "exit threshold" in page.locator("#id_maintenance_percent_helptext").inner_text()
    assert page.locator("a.viewsitelink").get_attribute("href") == "/contexts/ops/"
