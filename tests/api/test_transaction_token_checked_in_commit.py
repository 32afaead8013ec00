"""A transaction's agent token is checked inside the commit's own database transaction, so
the request may take a token this process found live a moment ago from memory: a token
revoked since (by another process, which this one cannot hear) still cannot commit, and a
token whose context was deleted is refused as a token."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from api import auth
from memory.contexts import authenticate_token, recently_authenticated
from memory.models import ApiToken, Context, TransactionRecord
from tests.api.conftest import Api, error_of

# Committed for real (no outer test transaction), so commits take the served path: the
# group commit, whose pipeline carries the token check with the row lock.
pytestmark = pytest.mark.django_db(transaction=True)

TX = '(context-tx (base-version {v}) (reason "note") (derive f-{i} (note hello)))'


def _revoke_elsewhere(raw_prefix: str) -> None:
    """Revoke as another server process would: in the database only."""
    ApiToken.objects.filter(key_prefix=raw_prefix).update(revoked_at=timezone.now())


def test_a_token_revoked_elsewhere_cannot_commit(alpha: Context, alpha_token: str) -> None:
    api = Api(alpha.slug, alpha_token)
    first = api.commit(TX.format(v=0, i=1))
    assert recently_authenticated(alpha_token) is not None  # the next request skips the check
    _revoke_elsewhere(alpha_token[:10])
    records = TransactionRecord.objects.count()

    response = api.post("transactions/", {"text": TX.format(v=first["version"], i=2)})

    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"
    assert Context.objects.get(pk=alpha.pk).version == first["version"]
    assert TransactionRecord.objects.count() == records  # no rejection recorded either
    assert recently_authenticated(alpha_token) is None


def test_a_retry_with_a_revoked_token_gets_no_receipt(alpha: Context, alpha_token: str) -> None:
    api = Api(alpha.slug, alpha_token)
    api.commit(TX.format(v=0, i=1), idempotency_key="k1")
    _revoke_elsewhere(alpha_token[:10])

    response = api.post("transactions/", {"text": TX.format(v=0, i=1), "idempotency_key": "k1"})

    assert response.status_code == 401


def test_a_deleted_contexts_token_is_refused_as_a_token(alpha: Context, alpha_token: str) -> None:
    api = Api(alpha.slug, alpha_token)
    api.commit(TX.format(v=0, i=1))
    Context.objects.filter(pk=alpha.pk).delete()  # as another server process would
    assert recently_authenticated(alpha_token) is not None

    response = api.post("transactions/", {"text": TX.format(v=1, i=2)})

    assert response.status_code == 401
    assert error_of(response)["code"] == "not_authenticated"


@pytest.mark.parametrize("path", ["transactions/", "frames/", "events/"])
def test_reads_check_the_token_in_the_database(alpha: Context, alpha_token: str, path: str) -> None:
    api = Api(alpha.slug, alpha_token)
    api.commit(TX.format(v=0, i=1))
    assert recently_authenticated(alpha_token) is not None
    _revoke_elsewhere(alpha_token[:10])

    response: Any = api.get(path)

    assert response.status_code == 401


def test_a_transaction_after_the_first_skips_the_separate_token_check(
    alpha: Context, alpha_token: str, monkeypatch: Any
) -> None:
    calls: list[str] = []

    def counted(raw: str) -> Any:
        calls.append(raw)
        return authenticate_token(raw)

    monkeypatch.setattr(auth, "authenticate_token", counted)
    api = Api(alpha.slug, alpha_token)
    first = api.commit(TX.format(v=0, i=1))
    api.commit(TX.format(v=first["version"], i=2))
    api.get("frames/")

    assert len(calls) == 2  # the first transaction and the read, not the second transaction
