"""Every endpoint x every caller (R38): no token 401, another context's token 404 (never
data), revoked token 401; staff people with a session reach every context."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from memory.models import Event, TransactionRecord
from tests.api.conftest import Api, error_of

ENDPOINTS: list[tuple[str, str, dict[str, Any] | None]] = [
    ("GET", "", None),
    ("GET", "events/", None),
    ("POST", "events/", {"kind": "tool_result", "content": "x"}),
    ("GET", "events/1/", None),
    ("POST", "evaluations/", {}),
    ("POST", "transactions/", {"text": "(context-tx (derive probe (a b)))"}),
    ("GET", "transactions/", None),
    ("GET", "frames/", None),
    ("GET", "frames/release/", None),
    ("GET", "relations/", None),
    ("POST", "recall/", {"frame_id": "release"}),
    ("GET", "search/", {"q": "release"}),
    ("POST", "actions/", {"name": "deploy"}),
]
IDS = [f"{m} {p or '.'}" for m, p, _ in ENDPOINTS]


def _call(api: Api, method: str, path: str, body: dict[str, Any] | None) -> Any:
    if method == "GET":
        return api.get(path, body)
    return api.post(path, body)


@pytest.fixture
def seeded(api: Api, released, beta) -> Api:
    return api


def _nothing_written(before: tuple[int, int]) -> None:
    assert (Event.objects.count(), TransactionRecord.objects.count()) == before


def _counts() -> tuple[int, int]:
    return Event.objects.count(), TransactionRecord.objects.count()


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=IDS)
def test_no_token_is_401(seeded: Api, method: str, path: str, body: Any) -> None:
    before = _counts()
    response = _call(Api("alpha"), method, path, body)
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"
    _nothing_written(before)


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=IDS)
def test_another_contexts_token_is_404(
    seeded: Api, beta_token: str, method: str, path: str, body: Any
) -> None:
    before = _counts()
    response = _call(Api("alpha", beta_token), method, path, body)
    assert response.status_code == 404
    error = error_of(response)
    assert error["code"] == "not_found"
    assert "release" not in response.content.decode()
    _nothing_written(before)


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=IDS)
def test_revoked_token_is_401(
    seeded: Api, revoked_token: str, method: str, path: str, body: Any
) -> None:
    before = _counts()
    response = _call(Api("alpha", revoked_token), method, path, body)
    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    _nothing_written(before)


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=IDS)
def test_garbage_tokens_are_401(seeded: Api, method: str, path: str, body: Any) -> None:
    for header in ("Bearer nonsense", "Token abc", "Bearer ", "Bearer mz_" + "x" * 500):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=header)
        response = _call(Api("alpha", client=client), method, path, body)
        assert response.status_code == 401, header
        assert error_of(response)["code"] == "not_authenticated"


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=IDS)
def test_staff_session_reaches_every_context(
    seeded: Api, staff: Any, method: str, path: str, body: Any
) -> None:
    client = APIClient()  # CSRF is checked in test_transactions_submit
    client.force_login(staff)
    for slug in ("alpha", "beta"):
        response = _call(Api(slug, client=client), method, path, body)
        assert response.status_code < 500
        assert response.status_code not in (401, 403), response.json()
        if slug == "alpha":
            assert response.status_code in (200, 201), response.json()


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS, ids=IDS)
def test_a_person_who_is_not_staff_gets_404(
    seeded: Api, django_user_model: Any, method: str, path: str, body: Any
) -> None:
    client = APIClient()
    client.force_login(django_user_model.objects.create_user("bob", password="pw"))
    response = _call(Api("alpha", client=client), method, path, body)
    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "bEaReR"])
def test_the_bearer_scheme_is_case_insensitive(alpha: Any, alpha_token: str, scheme: str) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"{scheme} {alpha_token}")
    response = Api("alpha", client=client).get()
    assert response.status_code == 200, response.json()


def test_last_use_of_a_token_is_recorded(api: Api) -> None:
    from memory.models import ApiToken

    api.get()
    token = ApiToken.objects.get(context__slug="alpha", name="agent-a")
    assert token.last_used_at is not None
