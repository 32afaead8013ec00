"""API test cast: two contexts with tokens, a revoked token, a staff person, and a JSON
client that talks to the real URL routes (no mocks)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from memory.contexts import create_context, issue_token, revoke_token
from memory.models import Context

# The typed client lives in client/ (not an installed package): make it importable here.
CLIENT_DIR = Path(__file__).resolve().parents[2] / "client"
if str(CLIENT_DIR) not in sys.path:
    sys.path.insert(0, str(CLIENT_DIR))


class Api:
    """Requests under /api/v1/contexts/<slug>/ with a bearer token (or none)."""

    def __init__(self, slug: str, token: str | None = None, client: APIClient | None = None):
        self.slug = slug
        self.client = client or APIClient()
        if token is not None:
            self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    def url(self, path: str = "") -> str:
        return f"/api/v1/contexts/{self.slug}/{path}"

    def get(self, path: str = "", params: dict[str, Any] | None = None, **extra: Any) -> Any:
        return self.client.get(self.url(path), params or {}, **extra)

    def post(self, path: str, data: Any = None, **extra: Any) -> Any:
        body = extra.pop("raw", None)
        if body is None:
            body = json.dumps(data if data is not None else {})
        content_type = extra.pop("content_type", "application/json")
        return self.client.generic("POST", self.url(path), body, content_type, **extra)

    def commit(self, text: str, **fields: Any) -> dict[str, Any]:
        response = self.post("transactions/", {"text": text, **fields})
        assert response.status_code == 201, response.json()
        return response.json()

    def observe(self, content: str, kind: str = "tool_result", **fields: Any) -> dict[str, Any]:
        response = self.post("events/", {"kind": kind, "content": content, **fields})
        assert response.status_code == 201, response.json()
        return response.json()


def error_of(response: Any) -> dict[str, Any]:
    """The error object of a response, after checking it has exactly the standard shape."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert isinstance(body["error"]["details"], list)
    assert body["error"]["message"]
    return body["error"]


@pytest.fixture
def alpha(db: Any) -> Context:
    return create_context("alpha", name="Alpha", grace_ticks=2, capacity_tokens=50_000)


@pytest.fixture
def beta(db: Any) -> Context:
    return create_context("beta", name="Beta")


@pytest.fixture
def alpha_token(alpha: Context) -> str:
    return issue_token(alpha, name="agent-a").raw


@pytest.fixture
def beta_token(beta: Context) -> str:
    return issue_token(beta, name="agent-b").raw


@pytest.fixture
def revoked_token(alpha: Context) -> str:
    issued = issue_token(alpha, name="old")
    revoke_token(issued.token.pk)
    return issued.raw


@pytest.fixture
def api(alpha: Context, alpha_token: str) -> Api:
    return Api(alpha.slug, alpha_token)


@pytest.fixture
def staff(db: Any) -> Any:
    return get_user_model().objects.create_user("ada", password="pw", is_staff=True)


@pytest.fixture
def released(api: Api) -> dict[str, Any]:
    """A small graph: @e1 tool result digested into `test-result`, which supports `release`."""
    log = api.observe("suite: 1600 passed", kind="tool_result")
    api.post("evaluations/", {})
    api.commit("(context-tx (derive release (goal ship-v1)))")
    receipt = api.commit(
        f"(context-tx (derive test-result (from {log['ref']}) (tests passed))"
        " (relate test-result supports release))"
    )
    return {"log": log, "receipt": receipt}
