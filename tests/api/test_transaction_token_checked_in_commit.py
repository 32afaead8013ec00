"""A transaction's agent token is checked inside the commit's own database transaction, so
the request may take a token this process found live a moment ago from memory: a token
revoked since (by another process, which this one cannot hear) still cannot commit, and a
token whose context was deleted is refused as a token."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from api import auth
from memory import contexts
from memory.contexts import (
    authenticate_token,
    create_context,
    delete_context,
    forget_token,
    issue_token,
    recently_authenticated,
    set_frozen,
)
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


# The transaction token check under concurrency and over time: group commits mixing live
# and revoked tokens commit the live ones only; a context deleted (and re-created under its
# slug) while writers are in flight takes nothing from the old tokens; a frozen context
# refuses a revoked token as a token; last use is still recorded; the cache stays bounded.


def _tx(i: Any) -> str:
    return f'(context-tx (reason "note") (derive f-{i} (note hello)))'


def _run_threads(jobs: list[Any]) -> list[Any]:
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def run(index: int) -> None:
        try:
            barrier.wait()
            results[index] = jobs[index]()
        except Exception as exc:  # reported by the test
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def test_a_group_with_revoked_members_commits_the_live_ones_only(alpha: Context) -> None:
    live = [issue_token(alpha, name=f"live{i}").raw for i in range(3)]
    dead = [issue_token(alpha, name=f"dead{i}").raw for i in range(3)]
    for n, raw in enumerate(live + dead):
        Api(alpha.slug, raw).commit(_tx(f"warm{n}"))
    for raw in dead:
        assert recently_authenticated(raw) is not None
        _revoke_elsewhere(raw[:10])
    before = TransactionRecord.objects.filter(context=alpha).count()
    last_pk = TransactionRecord.objects.order_by("-pk").values_list("pk", flat=True)[0]
    version = Context.objects.get(pk=alpha.pk).version

    jobs = []
    for round_ in range(3):
        for n, raw in enumerate(live + dead):
            jobs.append(
                lambda raw=raw, i=f"r{round_}-{n}": (
                    raw in dead,
                    Api(alpha.slug, raw).post("transactions/", {"text": _tx(i)}),
                )
            )
    results = _run_threads(jobs)

    assert not [r for r in results if isinstance(r, Exception)], results
    statuses = Counter((is_dead, r.status_code) for is_dead, r in results)
    assert statuses == Counter({(False, 201): 9, (True, 401): 9}), statuses
    for is_dead, r in results:
        if is_dead:
            assert error_of(r)["code"] == "not_authenticated"
    after = TransactionRecord.objects.filter(context=alpha)
    assert after.count() == before + 9
    assert not after.filter(pk__gt=last_pk, author__startswith="dead").exists()
    assert Context.objects.get(pk=alpha.pk).version == version + 9


def test_a_context_deleted_and_recreated_under_its_slug_while_writers_run(
    db: Any, monkeypatch: Any
) -> None:
    old = create_context("gamma")
    raws = [issue_token(old, name=f"w{i}").raw for i in range(4)]
    for n, raw in enumerate(raws):
        Api("gamma", raw).commit(_tx(f"warm{n}"))
    stop = threading.Event()
    seen: list[tuple[int, Any]] = []
    lock = threading.Lock()

    def writer(raw: str, w: int) -> None:
        n = 0
        try:
            while not stop.is_set() and n < 200:
                n += 1
                r = Api("gamma", raw).post("transactions/", {"text": _tx(f"{w}-{n}")})
                with lock:
                    seen.append((r.status_code, r.json()))
        finally:
            connection.close()

    threads = [threading.Thread(target=writer, args=(raw, w)) for w, raw in enumerate(raws)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with lock:
            if len(seen) >= 8:
                break
        time.sleep(0.01)
    # As another server process would: this one keeps the tokens in memory.
    monkeypatch.setattr(contexts, "forget_token", lambda token_id: None)
    delete_context(old.pk)
    new = create_context("gamma")
    new_raw = issue_token(new, name="new").raw
    Api("gamma", new_raw).commit(_tx("fresh"))
    time.sleep(0.3)  # the old tokens keep trying against the new context under the slug
    stop.set()
    for thread in threads:
        thread.join(60)

    codes = Counter(code for code, _ in seen)
    assert set(codes) <= {201, 401}, [b for c, b in seen if c not in (201, 401)][:3]
    assert codes[401] > 0 and codes[201] > 0, codes
    # nothing of the old tokens landed in the new context
    assert list(TransactionRecord.objects.filter(context=new).values_list("author", flat=True)) == [
        "new (token " + new_raw[:10] + ")"
    ]
    assert Context.objects.get(pk=new.pk).version == 1


@pytest.mark.parametrize("case", ["frozen-new", "frozen-replay"])
def test_a_revoked_token_on_a_frozen_context_is_refused_as_a_token(
    alpha: Context, alpha_token: str, case: str
) -> None:
    api = Api(alpha.slug, alpha_token)
    api.commit(_tx(1), idempotency_key="k1")
    set_frozen(alpha.pk, True)
    _revoke_elsewhere(alpha_token[:10])
    body = (
        {"text": _tx(1), "idempotency_key": "k1"} if case == "frozen-replay" else {"text": _tx(2)}
    )
    try:
        response = api.post("transactions/", body)
    finally:
        set_frozen(alpha.pk, False)
    assert response.status_code == 401, response.json()


def test_last_use_is_still_recorded_under_a_steady_stream_of_transactions(
    alpha: Context, alpha_token: str, monkeypatch: Any
) -> None:
    api = Api(alpha.slug, alpha_token)
    api.commit(_tx(0))
    first = ApiToken.objects.get(key_prefix=alpha_token[:10]).last_used_at
    assert first is not None
    # A minute later (both clocks), a steady stream of transactions.
    clock = contexts._clock()
    monkeypatch.setattr(contexts, "_clock", lambda: clock + 61)
    ApiToken.objects.filter(key_prefix=alpha_token[:10]).update(
        last_used_at=first - timezone.timedelta(seconds=61)
    )
    for i in range(1, 4):
        api.commit(_tx(i))
    later = ApiToken.objects.get(key_prefix=alpha_token[:10]).last_used_at
    assert later is not None and later > first - timezone.timedelta(seconds=61)


def test_the_cache_stays_bounded_and_consistent_under_threads(
    alpha: Context, monkeypatch: Any
) -> None:
    monkeypatch.setattr(contexts, "_RECENT_MAX", 8)
    issued = [issue_token(alpha, name=f"t{i}") for i in range(20)]

    def churn(k: int) -> None:
        for _ in range(30):
            for j, it in enumerate(issued):
                if (j + k) % 3 == 0:
                    forget_token(it.token.pk)
                elif (j + k) % 3 == 1:
                    recently_authenticated(it.raw)
                else:
                    authenticate_token(it.raw)

    results = _run_threads([lambda k=k: churn(k) for k in range(4)])
    assert not [r for r in results if isinstance(r, Exception)], results
    assert len(contexts._recent) <= 8
