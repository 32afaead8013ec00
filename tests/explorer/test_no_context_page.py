"""`/contexts/<slug>/` for a slug that is not there answers 404 with a page that says so,
links to the list of contexts and suggests a near slug, instead of Django's bare "Not Found"."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context


def test_a_missing_context_has_a_page_that_says_where_to_go(admin_client: Any) -> None:
    create_context("release-team")
    response = admin_client.get("/contexts/release-tem/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "No context named “release-tem”" in page
    assert 'href="/"' in page  # all contexts
    assert 'href="/contexts/release-team/"' in page  # did you mean


def test_nothing_near_suggests_nothing(admin_client: Any) -> None:
    response = admin_client.get("/contexts/nope/")
    assert response.status_code == 404
    assert "No context named “nope”" in response.content.decode()
    assert "did you mean" not in response.content.decode()
