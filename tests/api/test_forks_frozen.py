"""Forks (R53), frozen contexts (R54) and evaluations read back (R55) through the API."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from memory.contexts import issue_token
from memory.errors import InvalidRequest
from memory.models import (
    Context,
    Evaluation,
    Event,
    ForkReceipt,
    Frame,
    SearchDocument,
    TransactionRecord,
)
from memory.search.indexer import drain
from memory.versions.forks import fork_context
from tests.api.conftest import Api, error_of


def _state(slug: str) -> dict[str, Any]:
    ctx = Context.objects.get(slug=slug)
    return {
        "counters": (ctx.version, ctx.tick, ctx.last_seq, ctx.used_tokens, ctx.in_maintenance),
        "frames": sorted(
            Frame.objects.filter(context=ctx).values_list(
                "frame_id", "revision", "status", "protected", "body", "sources"
            )
        ),
        "events": sorted(
            Event.objects.filter(context=ctx).values_list(
                "seq", "kind", "content", "active", "pending", "request_state"
            )
        ),
        "transactions": sorted(
            TransactionRecord.objects.filter(context=ctx).values_list(
                "committed_version", "status", "text"
            ),
            key=str,
        ),
    }


def test_fork_now_copies_state_and_answers_lineage(api: Api, released: dict[str, Any]) -> None:
    before = _state(api.slug)
    response = api.post("forks/", {"slug": "alpha-copy"})
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "alpha-copy"
    assert body["forked_from"] == {"slug": api.slug, "version": 2, "tick": 1}
    assert _state("alpha-copy") == before
    assert _state(api.slug) == before
    fork = Api("alpha-copy", body["token"])
    shown = fork.get().json()
    assert shown["forked_from"] == {"slug": api.slug, "version": 2, "tick": 1}
    assert shown["version"] == 2
    # The fork's token does not reach the source, and writes stay apart.
    assert Api(api.slug, body["token"]).get().status_code == 404
    fork.observe("only in the fork")
    assert _state(api.slug) == before


def test_fork_at_version_equals_the_source_then(api: Api, released: dict[str, Any]) -> None:
    at_one = _state(api.slug)
    api.commit("(context-tx (revise release (goal ship-v2)) (retire test-result))")
    api.observe("after version 3")
    response = api.post("forks/", {"slug": "back", "at_version": 2})
    assert response.status_code == 201, response.json()
    assert _state("back") == at_one
    assert response.json()["forked_from"]["version"] == 2


def test_fork_search_index_is_its_own(api: Api, released: dict[str, Any]) -> None:
    drain()
    response = api.post("forks/", {"slug": "searchable"})
    fork_ctx = Context.objects.get(slug="searchable")
    drain()
    src_docs = SearchDocument.objects.filter(context__slug=api.slug).count()
    assert SearchDocument.objects.filter(context=fork_ctx).count() == src_docs
    fork = Api("searchable", response.json()["token"])
    fork.observe("zanzibar appears only in the fork")
    drain()
    hits = fork.get("search/", {"q": "zanzibar"}).json()["hits"]
    assert [h["ref"] for h in hits] == ["@e4"]
    assert api.get("search/", {"q": "zanzibar"}).json()["hits"] == []
    passed = fork.get("search/", {"q": "passed"}).json()["hits"]
    assert passed and all(h.get("ref") or h.get("id") for h in passed)


def test_fork_refuses_bad_version_and_taken_slug(api: Api, released: dict[str, Any]) -> None:
    assert error_of(api.post("forks/", {"at_version": 99}))["code"] == "invalid_version"
    assert api.post("forks/", {"slug": "beta-x"}).status_code == 201
    assert error_of(api.post("forks/", {"slug": "beta-x"}))["code"] == "context_exists"


WRITES: list[tuple[str, dict[str, Any]]] = [
    ("events/", {"kind": "tool_result", "content": "x"}),
    ("evaluations/", {}),
    ("transactions/", {"text": "(context-tx (derive z (a 1)))"}),
    ("actions/", {"name": "deploy"}),
    ("recall/", {"frame_id": "release", "as_observation": True}),
]


def test_frozen_refuses_every_write_and_keeps_reads(api: Api, released: dict[str, Any]) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": true}', "application/json")
    assert response.status_code == 200, response.json()
    assert response.json()["frozen"] is True
    before = _state(api.slug)
    for path, body in WRITES:
        error = error_of(api.post(path, body))
        assert error["code"] == "context_frozen", (path, error)
    assert api.post(WRITES[0][0], WRITES[0][1]).status_code == 409
    assert _state(api.slug) == before
    assert TransactionRecord.objects.filter(context__slug=api.slug, status="rejected").count() == 0
    assert api.get("frames/").status_code == 200
    assert api.get("events/").status_code == 200
    assert api.post("recall/", {"frame_id": "release"}).status_code == 200
    assert api.get("search/", {"q": "passed"}).status_code == 200
    assert api.post("forks/", {"slug": "thawed"}).status_code == 201
    assert Context.objects.get(slug="thawed").frozen is False
    response = api.client.generic("PATCH", api.url(), '{"frozen": false}', "application/json")
    assert error_of(response)["code"] == "scope_insufficient"  # unfreezing is an admin's
    admin = Api(api.slug, issue_token(Context.objects.get(slug=api.slug), scope="admin").raw)
    response = admin.client.generic("PATCH", api.url(), '{"frozen": false}', "application/json")
    assert response.json()["frozen"] is False
    assert api.post(*WRITES[0]).status_code == 201


def test_patch_refuses_other_fields(api: Api) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": "yes"}', "application/json")
    assert response.status_code == 400
    response = api.client.generic("PATCH", api.url(), '{"version": 3}', "application/json")
    assert response.status_code == 400


def test_evaluations_list_and_detail(api: Api, released: dict[str, Any]) -> None:
    api.observe("second batch")
    created = api.post("evaluations/", {}).json()
    listed = api.get("evaluations/").json()
    assert [e["id"] for e in listed["evaluations"]][-1] == created["id"]
    first, second = listed["evaluations"]
    assert first["claimed"] == [released["log"]["ref"]]
    assert first["view_version"] == 0 and first["tick"] == 1
    assert second["claimed"] == ["@e4"] and second["view_version"] == 2
    detail = api.get(f"evaluations/{created['id']}/").json()
    assert detail["input"]["text"] == created["text"]
    assert detail["input"]["context"] == created["context"]
    assert [f["id"] for f in detail["frames_seen"]] == ["release", "test-result"]
    assert "@e4" in detail["observations_seen"]
    page = api.get("evaluations/", {"limit": 1}).json()
    assert len(page["evaluations"]) == 1 and page["next_cursor"]
    rest = api.get("evaluations/", {"limit": 1, "cursor": page["next_cursor"]}).json()
    assert rest["evaluations"][0]["id"] == created["id"]


def test_evaluation_of_another_context_is_not_found(
    api: Api, beta: Context, beta_token: str
) -> None:
    other = Api(beta.slug, beta_token)
    other.observe("beta input")
    evaluation = other.post("evaluations/", {}).json()
    assert error_of(api.get(f"evaluations/{evaluation['id']}/"))["code"] == "not_found"


@pytest.mark.parametrize("version", [-1, "x"])
def test_fork_bad_version_input(api: Api, version: Any) -> None:
    assert api.post("forks/", {"at_version": version}).status_code == 400


# A fork's `name` is the name to give it, or absent (or null) for the default one: an
# empty or blank name is 400 naming `name` and creates no context, rather than silently
# meaning the default.


@pytest.mark.parametrize("name", ["", "   ", "\t\n"])
def test_an_empty_fork_name_is_refused(api: Api, name: str) -> None:
    before = Context.objects.count()
    response = api.post("forks/", {"name": name})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == ["name"]
    assert Context.objects.count() == before


@pytest.mark.parametrize("body", [{}, {"name": None}])
def test_an_absent_or_null_name_is_the_default(api: Api, body: dict[str, None]) -> None:
    response = api.post("forks/", body)
    assert response.status_code == 201, response.json()
    fork = Context.objects.get(slug=response.json()["slug"])
    assert fork.name == "Alpha (fork at v0)"


def test_a_given_name_is_kept(api: Api) -> None:
    response = api.post("forks/", {"name": "Try-out"})
    assert response.status_code == 201, response.json()
    assert Context.objects.get(slug=response.json()["slug"]).name == "Try-out"


def test_the_memory_function_refuses_a_blank_name(alpha: Context) -> None:
    with pytest.raises(InvalidRequest) as raised:
        fork_context(alpha, name=" ")
    assert raised.value.details == [{"field": "name"}]
    assert not Context.objects.exclude(pk=alpha.pk).exists()


# A fork whose answer was lost, retried under the same idempotency key, gets the same fork
# and the same token, answered 200 as every idempotent retry is (a new fork is 201) (issue
# 35: the retry got `context_exists` and the token was lost); the
# key with other arguments, or presented by another caller, is 409 `idempotency_key_reused`,
# and the token is stored only sealed with the caller's own credential.


def test_a_retried_fork_gets_the_same_fork_and_token(api: Api) -> None:
    api.commit("(context-tx (derive note (a b)))")
    body = {"slug": "alpha-copy", "idempotency_key": "fork-1"}
    first = api.post("forks/", body)
    assert first.status_code == 201, first.json()
    again = api.post("forks/", body)
    assert again.status_code == 200, again.json()
    assert again.json()["slug"] == first.json()["slug"] == "alpha-copy"
    assert again.json()["token"] == first.json()["token"]
    assert Context.objects.filter(slug="alpha-copy").count() == 1
    copy = Api("alpha-copy", again.json()["token"])
    assert copy.get("").status_code == 200


def test_a_retried_fork_sent_with_a_lowercase_scheme_gets_the_same_token(
    alpha: Context, alpha_token: str
) -> None:
    # Authentication schemes are case-insensitive (RFC 9110): `bearer` authenticates, so
    # the token it carries seals the fork's token as `Bearer` does.
    api = Api("alpha", client=APIClient(HTTP_AUTHORIZATION=f"bearer {alpha_token}"))
    body = {"slug": "lower", "idempotency_key": "fork-lower"}
    first = api.post("forks/", body)
    again = api.post("forks/", body)
    assert (first.status_code, again.status_code) == (201, 200), first.content[:300]
    assert again.json()["token"] == first.json()["token"]


def test_a_retry_without_a_slug_gets_the_same_generated_fork(api: Api) -> None:
    first = api.post("forks/", {}, HTTP_IDEMPOTENCY_KEY="no-slug")
    again = api.post("forks/", {}, HTTP_IDEMPOTENCY_KEY="no-slug")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json() == first.json()


def test_the_key_with_other_arguments_is_refused(api: Api) -> None:
    assert api.post("forks/", {"slug": "one", "idempotency_key": "k"}).status_code == 201
    refused = api.post("forks/", {"slug": "two", "idempotency_key": "k"})
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "idempotency_key_reused"
    assert not Context.objects.filter(slug="two").exists()


def test_another_caller_with_the_same_key_gets_no_token(api: Api, alpha: Any) -> None:
    assert api.post("forks/", {"slug": "mine", "idempotency_key": "k2"}).status_code == 201
    other = Api("alpha", issue_token(alpha).raw)
    refused = other.post("forks/", {"slug": "mine", "idempotency_key": "k2"})
    assert refused.status_code == 409
    assert error_of(refused)["code"] == "idempotency_key_reused"
    assert "token" not in refused.json()


def test_the_token_is_not_stored_in_the_clear(api: Api) -> None:
    answer = api.post("forks/", {"slug": "sealed", "idempotency_key": "k3"}).json()
    receipt = ForkReceipt.objects.get(key="k3")
    assert answer["token"].encode() not in bytes(receipt.sealed_token)
    assert len(bytes(receipt.sealed_token)) == len(answer["token"])


# A frozen context still answers an idempotent retry with its first result (it writes
# nothing, R49, R54): an agent whose first answer was lost learns its write happened. Any
# write that is not such a retry is refused with 409 `context_frozen`, as before.


def freeze(api: Api) -> None:
    response = api.client.generic("PATCH", api.url(), '{"frozen": true}', "application/json")
    assert response.status_code == 200


def same_result(key: str, again: dict[str, Any], first: dict[str, Any]) -> bool:
    """The retry names what the first request wrote (an event's state may have moved since:
    an evaluation claimed it; a receipt or an evaluation's result is the same whole)."""
    if key == "events/":
        return again["ref"] == first["ref"] and again["created"] is False
    if key == "bulk":
        return [e["ref"] for e in again["events"]] == [e["ref"] for e in first["events"]]
    return again == first


def test_retries_are_answered_and_new_writes_refused(api: Api, released: dict[str, Any]) -> None:
    event = {"kind": "tool_result", "content": "a", "idempotency_key": "ev"}
    batch = {"events": [{"kind": "tool_result", "content": "b", "idempotency_key": "bk"}]}
    tx = {"text": "(context-tx (derive later (a b)))", "idempotency_key": "tx"}
    evaluation = {"idempotency_key": "eval"}
    first = {
        "events/": api.post("events/", event).json(),
        "bulk": api.post("events/", batch).json(),
        "transactions/": api.post("transactions/", tx).json(),
        "evaluations/": api.post("evaluations/", evaluation).json(),
    }
    freeze(api)
    counts = (Event.objects.count(), TransactionRecord.objects.count(), Evaluation.objects.count())
    for path, body, key in (
        ("events/", event, "events/"),
        ("events/", batch, "bulk"),
        ("transactions/", tx, "transactions/"),
        ("evaluations/", evaluation, "evaluations/"),
    ):
        again = api.post(path, body)
        assert again.status_code == 200, (path, again.json())
        assert same_result(key, again.json(), first[key]), (key, again.json(), first[key])
    new_writes = (
        ("events/", {"kind": "tool_result", "content": "new", "idempotency_key": "ev2"}),
        ("events/", {"events": [{"kind": "tool_result", "content": "new"}]}),
        ("transactions/", {"text": "(context-tx (derive newer (a b)))", "idempotency_key": "t2"}),
        ("evaluations/", {"idempotency_key": "eval2"}),
    )
    for path, body in new_writes:
        assert error_of(api.post(path, body))["code"] == "context_frozen", (path, body)
    assert (
        Event.objects.count(),
        TransactionRecord.objects.count(),
        Evaluation.objects.count(),
    ) == counts
