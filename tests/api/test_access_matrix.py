"""Every endpoint x every caller (R38): no token 401, another context's token 404 (never
data), revoked token 401; staff people with a session reach every context. The endpoints are
read from the URL configuration, so a new route is checked without a list to edit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from memory.models import Evaluation, Event, TransactionRecord
from tests.api.conftest import Api, error_of

CONTEXT_PREFIX = "v1/contexts/<slug:slug>/"
# Path parameters filled for the calls; `{...}` ones are looked up in the seeded context.
ROUTE_PARAMS = {
    "<int:seq>": "1",
    "<int:evaluation_id>": "{evaluation}",
    "<str:frame_id>": "release",
    "<int:revision>": "1",
}
# What a staff person sends to get a success from each route on the seeded context; every
# route needs one (test_every_route_has_a_sample), anything else may send `{}`.
SAMPLES: dict[tuple[str, str], dict[str, Any] | None] = {
    ("GET", ""): None,
    ("PATCH", ""): {"frozen": False},
    ("GET", "events/"): None,
    ("POST", "events/"): {"kind": "tool_result", "content": "x"},
    ("GET", "events/1/"): None,
    ("GET", "evaluations/"): None,
    ("POST", "evaluations/"): {},
    ("GET", "evaluations/{evaluation}/"): None,
    ("POST", "forks/"): {},
    ("GET", "diff/"): {"from": 0},
    ("POST", "transactions/"): {"text": "(context-tx (derive probe (a b)))"},
    ("GET", "transactions/"): None,
    ("GET", "frames/"): None,
    ("GET", "frames/release/"): None,
    ("POST", "frames/release/body/"): {"form": "fields", "text": "(goal ship-v2)"},
    ("GET", "frames/release/revisions/1/"): None,
    ("GET", "relations/"): None,
    ("POST", "recall/"): {"frame_id": "release"},
    ("GET", "search/"): {"q": "release"},
    ("POST", "actions/"): {"name": "deploy"},
    ("POST", "actions/{action}/cancel/"): {"reason": "not needed"},
    ("GET", "erasures/"): None,
    ("POST", "erasures/"): {"refs": ["@e1"], "reason": "test"},
    ("GET", "protocol/"): None,
    ("POST", "replies/"): {"text": "done"},
}


def _context_routes() -> list[tuple[str, str, Any]]:
    """(method, path under the context, view class) of every route under
    /api/v1/contexts/<slug>/, for every method its view implements."""
    out = []
    for entry in get_resolver().url_patterns:
        if not (isinstance(entry, URLResolver) and str(entry.pattern) == "api/"):
            continue
        for pattern in entry.url_patterns:
            route = str(getattr(pattern, "pattern", ""))
            view = getattr(getattr(pattern, "callback", None), "view_class", None)
            if not isinstance(pattern, URLPattern) or view is None:
                continue
            if not route.startswith(CONTEXT_PREFIX):
                continue
            path = route.removeprefix(CONTEXT_PREFIX)
            for name, value in ROUTE_PARAMS.items():
                path = path.replace(name, value)
            if path.startswith("actions/") and path.endswith("/cancel/"):
                path = "actions/{action}/cancel/"  # the seeded pending action
            for method in ("get", "post", "patch", "put", "delete"):
                if hasattr(view, method):
                    out.append((method.upper(), path, view))
    return out


CONTEXT_ROUTES = _context_routes()
ENDPOINTS = [(m, p, SAMPLES.get((m, p))) for m, p, _view in CONTEXT_ROUTES]
IDS = [f"{m} {p or '.'}" for m, p, _ in ENDPOINTS]


def test_every_route_has_a_sample() -> None:
    assert {(m, p) for m, p, _v in CONTEXT_ROUTES} == set(SAMPLES)
    assert len(CONTEXT_ROUTES) == len(SAMPLES) >= 25


def _call(api: Api, method: str, path: str, body: dict[str, Any] | None) -> Any:
    evaluation = Evaluation.objects.filter(context__slug="alpha").order_by("pk").first()
    action = Event.objects.filter(context__slug="alpha", kind="action").first()
    path = path.format(
        evaluation=evaluation.pk if evaluation else 1, action=action.seq if action else 1
    )
    if method == "GET":
        return api.get(path, body)
    if method == "POST":
        return api.post(path, body)
    return api.client.generic(method, api.url(path), json.dumps(body), "application/json")


@pytest.fixture
def seeded(api: Api, released, beta) -> Api:
    api.post("actions/", {"name": "deploy"})  # a pending action to cancel
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
    from django.contrib.auth.models import Permission

    staff.user_permissions.add(Permission.objects.get(codename="add_erasure"))
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


# -- scopes (R65): every context route, every method, every scope, from the URL config ---

SCOPES = ("read", "agent", "erase", "admin")


@pytest.mark.parametrize("scope", SCOPES)
def test_every_route_answers_each_scope_as_the_scope_table_says(
    seeded: Api, alpha: Any, scope: str
) -> None:
    from memory.contexts import issue_token
    from memory.scopes import allows

    api = Api("alpha", issue_token(alpha, name=f"scoped-{scope}", scope=scope).raw)
    checked = 0
    for method, path, view in CONTEXT_ROUTES:
        needed = view.capability(method)
        before = _counts()
        response = api.client.generic(
            method, api.url(path.format(evaluation=1, action=1)), "{}", "application/json"
        )
        where = f"{method} {path or '.'} as {scope}"
        assert response.status_code < 500, where
        if allows(scope, needed):
            assert response.status_code not in (401, 403), (where, response.content[:300])
        else:
            assert response.status_code == 403, where
            assert error_of(response)["code"] == "scope_insufficient", where
            _nothing_written(before)
        checked += 1
    assert checked == len(CONTEXT_ROUTES)


def test_acts_inside_a_route_check_their_own_scope(seeded: Api, alpha: Any, settings: Any) -> None:
    """Recall as an observation writes; unfreezing, screening and forking past the limit
    are an admin's."""
    from memory.contexts import issue_token, set_frozen

    read = Api("alpha", issue_token(alpha, scope="read").raw)
    agent = seeded
    admin = Api("alpha", issue_token(alpha, scope="admin").raw)
    assert read.post("recall/", {"frame_id": "release"}).status_code == 200
    refused = read.post("recall/", {"frame_id": "release", "as_observation": True})
    assert error_of(refused)["code"] == "scope_insufficient"
    set_frozen(alpha.pk, True)
    patch = '{"frozen": false}'
    response = agent.client.generic("PATCH", agent.url(), patch, "application/json")
    assert error_of(response)["code"] == "scope_insufficient"
    response = admin.client.generic("PATCH", admin.url(), patch, "application/json")
    assert response.status_code == 200 and response.json()["frozen"] is False
    body = '{"screening": "mask"}'
    response = agent.client.generic("PATCH", agent.url(), body, "application/json")
    assert error_of(response)["code"] == "scope_insufficient"
    settings.MORPHZ_FORK_LIMIT = 1
    assert agent.post("forks/", {"slug": "first-fork"}).status_code == 201
    assert error_of(agent.post("forks/", {"slug": "second-fork"}))["code"] == "scope_insufficient"
    assert admin.post("forks/", {"slug": "second-fork"}).status_code == 201
