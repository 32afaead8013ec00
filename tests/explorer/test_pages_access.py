"""Only signed-in staff people reach the explorer; others go to the login form (R38, R39)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memory.contexts import create_context

pytestmark = pytest.mark.django_db


@pytest.fixture
def context() -> Any:
    return create_context("team")


def test_anonymous_visitors_are_sent_to_the_login_form(client: Client, context: Any) -> None:
    for path in ("/", "/contexts/team/"):
        response = client.get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")


def test_people_without_staff_status_see_nothing(client: Client, context: Any) -> None:
    get_user_model().objects.create_user("visitor", password="pw-visitor-1")
    client.login(username="visitor", password="pw-visitor-1")
    assert client.get("/contexts/team/").status_code == 302


def test_staff_see_the_list_and_the_explorer_with_its_first_paint_data(
    client: Client, context: Any
) -> None:
    get_user_model().objects.create_user("staff", password="pw-staff-1", is_staff=True)
    client.login(username="staff", password="pw-staff-1")
    listing = client.get("/")
    assert listing.status_code == 200 and b'href="/contexts/team/"' in listing.content
    page = client.get("/contexts/team/")
    assert page.status_code == 200
    assert b'id="snapshot-data" type="application/json"' in page.content
    assert "csrftoken" in page.cookies
    assert client.get("/contexts/nope/").status_code == 404
