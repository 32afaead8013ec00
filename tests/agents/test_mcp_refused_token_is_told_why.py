"""The MCP endpoint tells a refused token why, as the REST API does: 401
`not_authenticated` with "token revoked", "token expired at <UTC time>" or "unknown
token"; no token at all is told how to send one."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.utils import timezone

from memory.contexts import create_context, issue_token, revoke_token

pytestmark = pytest.mark.slow


def _refusal(url: str, headers: dict[str, str]) -> str:
    answer = httpx.post(f"{url}/mcp/", json={}, headers=headers)
    assert answer.status_code == 401, answer.text
    error = answer.json()["error"]
    assert error["code"] == "not_authenticated"
    return str(error["message"])


def test_mcp_names_why_a_token_was_refused(asgi_server: Any, transactional_db: Any) -> None:
    context = create_context("mcp-told")
    revoked = issue_token(context)
    revoke_token(revoked.token.pk)
    expires = timezone.now() + timedelta(seconds=0.5)
    expiring = issue_token(context, expires_at=expires)
    time.sleep(0.6)
    url = asgi_server.url

    assert _refusal(url, {"Authorization": f"Bearer {revoked.raw}"}) == "token revoked"
    assert (
        _refusal(url, {"Authorization": f"Bearer {expiring.raw}"})
        == f"token expired at {expires:%Y-%m-%dT%H:%M:%SZ}"
    )
    assert _refusal(url, {"Authorization": "Bearer mz_nope"}) == "unknown token"
    assert "Authorization: Bearer" in _refusal(url, {})
