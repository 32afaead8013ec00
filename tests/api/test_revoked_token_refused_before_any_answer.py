"""A token revoked in another process (or whose context was deleted) while this process
still holds it in `recently_authenticated` is refused with 401 `not_authenticated` on the
transactions endpoint whatever else is wrong with the request: it writes nothing, records
no rejection against the context, and learns nothing (docs/rest.md)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from memory.contexts import recently_authenticated
from memory.models import ApiToken, Context, TransactionRecord
from tests.api.conftest import Api, error_of

pytestmark = pytest.mark.django_db(transaction=True)

TX = '(context-tx (base-version {v}) (reason "note") (derive f-{i} (note hello)))'


def _revoke_elsewhere(raw: str) -> None:
    """Revoke as another server process would: in the database only."""
    ApiToken.objects.filter(key_prefix=raw[:10]).update(revoked_at=timezone.now())


def _warm(api: Api) -> dict[str, Any]:
    first = api.commit(TX.format(v=0, i=1))
    return first


def _assert_refused_as_token(response: Any) -> None:
    assert response.status_code == 401, (response.status_code, response.json())
    assert error_of(response)["code"] == "not_authenticated"
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "body",
    [
        {"text": "(context-tx (derive"},  # parse_error
        {"text": "this is not a transaction"},  # parse_error
        {"ops": [{"op": "nonsense"}]},  # JSON form that does not validate
        {"text": '(context-tx (thread "x") (derive f-9 (note hi)))', "thread": "y"},
    ],
    ids=["truncated", "garbage", "bad-json-form", "thread-mismatch"],
)
def test_a_revoked_token_cannot_record_a_rejection(
    alpha: Context, alpha_token: str, body: dict[str, Any]
) -> None:
    api = Api(alpha.slug, alpha_token)
    _warm(api)
    assert recently_authenticated(alpha_token) is not None
    _revoke_elsewhere(alpha_token)
    records = TransactionRecord.objects.filter(context=alpha).count()

    response = api.post("transactions/", body)

    assert TransactionRecord.objects.filter(context=alpha).count() == records
    _assert_refused_as_token(response)


def test_a_revoked_token_cannot_fill_the_history_with_rejections(
    alpha: Context, alpha_token: str
) -> None:
    api = Api(alpha.slug, alpha_token)
    _warm(api)
    _revoke_elsewhere(alpha_token)
    before = TransactionRecord.objects.filter(context=alpha).count()
    big = "(context-tx (derive " + "x" * 200_000  # unparsable, stored verbatim
    statuses = [api.post("transactions/", {"text": big}).status_code for _ in range(5)]
    stored = TransactionRecord.objects.filter(context=alpha).count() - before
    assert (statuses, stored) == ([401] * 5, 0)


def test_a_deleted_contexts_token_gets_401_not_400_for_a_malformed_transaction(
    alpha: Context, alpha_token: str
) -> None:
    api = Api(alpha.slug, alpha_token)
    _warm(api)
    Context.objects.filter(pk=alpha.pk).delete()  # as another server process would
    assert recently_authenticated(alpha_token) is not None

    response = api.post("transactions/", {"text": "(context-tx (derive"})

    _assert_refused_as_token(response)


def test_a_revoked_token_gets_401_for_a_body_that_does_not_validate(
    alpha: Context, alpha_token: str
) -> None:
    api = Api(alpha.slug, alpha_token)
    _warm(api)
    _revoke_elsewhere(alpha_token)

    response = api.post("transactions/", {"text": 5})

    _assert_refused_as_token(response)


def test_a_revoked_token_gets_401_on_another_slug_too(
    alpha: Context, alpha_token: str, beta: Context
) -> None:
    api = Api(alpha.slug, alpha_token)
    _warm(api)
    _revoke_elsewhere(alpha_token)

    response = Api(beta.slug, alpha_token).post("transactions/", {"text": TX.format(v=0, i=2)})

    _assert_refused_as_token(response)
