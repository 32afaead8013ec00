"""A refused token is told why, with the same 401 `not_authenticated`: "token expired at
<UTC time>", "token revoked" or "unknown token" (docs/rest.md). The write path, which
checks a remembered token inside its own transaction, names the reason too."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from memory.contexts import create_context, issue_token, recently_authenticated
from memory.models import ApiToken
from tests.api.conftest import Api, error_of

pytestmark = pytest.mark.django_db(transaction=True)


def _refusal(response: Any) -> str:
    assert response.status_code == 401, (response.status_code, response.json())
    error = error_of(response)
    assert error["code"] == "not_authenticated"
    return str(error["message"])


def test_an_expired_token_is_told_when_it_expired() -> None:
    context = create_context("told-expired")
    expires = timezone.now() + timedelta(seconds=0.5)
    issued = issue_token(context, expires_at=expires)
    time.sleep(0.6)

    message = _refusal(Api(context.slug, issued.raw).get())

    assert message == f"token expired at {expires:%Y-%m-%dT%H:%M:%SZ}"


def test_a_revoked_token_and_an_unknown_one_are_told_apart() -> None:
    context = create_context("told-revoked")
    issued = issue_token(context)
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())

    assert _refusal(Api(context.slug, issued.raw).get()) == "token revoked"
    assert _refusal(Api(context.slug, "mz_" + "x" * 40).get()) == "unknown token"
    assert _refusal(Api(context.slug, "not-a-morphz-token").get()) == "unknown token"


def test_a_write_with_a_remembered_token_revoked_elsewhere_is_told_revoked() -> None:
    context = create_context("told-on-write")
    issued = issue_token(context)
    api = Api(context.slug, issued.raw)
    tx = '(context-tx (base-version {v}) (reason "r") (derive f-{v} (note hi)))'
    assert api.post("transactions/", {"text": tx.format(v=0)}).status_code == 201
    assert recently_authenticated(issued.raw) is not None
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())

    assert _refusal(api.post("transactions/", {"text": tx.format(v=1)})) == "token revoked"
