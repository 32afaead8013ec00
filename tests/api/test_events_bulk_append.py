"""POST /api/v1/contexts/{slug}/events/ with {"events": [...]}: bulk append (R50)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Context, Event, IndexIntent
from tests.api.conftest import Api, error_of


def bulk(api: Api, items: list[dict[str, Any]], **extra: Any) -> Any:
    return api.post("events/", {"events": items}, **extra)


def stored(slug: str = "alpha") -> list[tuple[int, str, str]]:
    return list(
        Event.objects.filter(context__slug=slug)
        .order_by("seq")
        .values_list("seq", "kind", "content")
    )


def test_bulk_appends_in_order_and_answers_each_ref_and_seq(api: Api) -> None:
    api.observe("before")
    response = bulk(
        api,
        [
            {"kind": "user_message", "content": "Ship v1", "thread": "t-1"},
            {"kind": "tool_result", "content": "tests passed", "payload": {"n": 3}},
            {"kind": "external_fact", "content": "release window opens"},
        ],
    )
    assert response.status_code == 201
    answer = response.json()["events"]
    assert [(e["ref"], e["seq"], e["kind"], e["created"]) for e in answer] == [
        ("@e2", 2, "user_message", True),
        ("@e3", 3, "tool_result", True),
        ("@e4", 4, "external_fact", True),
    ]
    assert answer[0]["thread"] == "t-1" and answer[0]["request"] == "open"
    assert stored()[1:] == [
        (2, "user_message", "Ship v1"),
        (3, "tool_result", "tests passed"),
        (4, "external_fact", "release window opens"),
    ]
    assert Event.objects.get(context__slug="alpha", seq=3).payload == {"n": 3}
    context = Context.objects.get(slug="alpha")
    assert context.last_seq == 4
    # the used tokens count every observation, as four single appends would
    assert context.used_tokens == sum(
        Event.objects.filter(context=context).values_list("token_estimate", flat=True)
    )
    # every new event is queued for the search index, and the next evaluation claims them all
    assert IndexIntent.objects.filter(context=context).count() == 4
    claimed = api.post("evaluations/", {}).json()["claimed"]
    assert claimed == ["@e1", "@e2", "@e3", "@e4"]


def test_one_bad_item_refuses_the_batch_and_writes_nothing(api: Api) -> None:
    response = bulk(
        api,
        [
            {"kind": "tool_result", "content": "fine"},
            {"kind": "transaction", "content": "not appendable"},
        ],
    )
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_kind"  # as a single append's bad kind
    assert any(d["field"] == "events[1].kind" for d in error["details"])
    assert stored() == []
    assert Context.objects.get(slug="alpha").last_seq == 0


def test_a_rule_broken_late_in_the_batch_writes_nothing(api: Api) -> None:
    response = bulk(
        api,
        [
            {"kind": "tool_result", "content": "fine"},
            {"kind": "agent_message", "content": "done", "delivers": ["@e9"]},
        ],
    )
    assert response.status_code == 422
    assert error_of(response)["code"] == "unknown_ref"
    assert stored() == []
    assert IndexIntent.objects.count() == 0


def test_idempotency_holds_per_item(api: Api) -> None:
    first = api.observe("old", idempotency_key="k-old")
    items = [
        {"kind": "tool_result", "content": "old", "idempotency_key": "k-old"},
        {"kind": "tool_result", "content": "new", "idempotency_key": "k-new"},
        {"kind": "tool_result", "content": "no key"},
    ]
    response = bulk(api, items)
    assert response.status_code == 201
    answer = response.json()["events"]
    assert [(e["ref"], e["created"]) for e in answer] == [
        (first["ref"], False),
        ("@e2", True),
        ("@e3", True),
    ]
    # the same keyed items again write nothing and answer 200
    retry = bulk(api, items[:2])
    assert retry.status_code == 200
    assert [(e["ref"], e["created"]) for e in retry.json()["events"]] == [
        ("@e1", False),
        ("@e2", False),
    ]
    assert len(stored()) == 3


def test_a_key_repeated_inside_one_batch_answers_the_first_item(api: Api) -> None:
    item = {"kind": "tool_result", "content": "same", "idempotency_key": "dup"}
    answer = bulk(api, [item, item]).json()["events"]
    assert [(e["ref"], e["created"]) for e in answer] == [("@e1", True), ("@e1", False)]
    assert len(stored()) == 1


def test_a_key_reused_for_another_event_refuses_the_batch(api: Api) -> None:
    api.observe("a", idempotency_key="k")
    response = bulk(
        api,
        [
            {"kind": "tool_result", "content": "fresh"},
            {"kind": "tool_result", "content": "b", "idempotency_key": "k"},
        ],
    )
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "idempotency_key_reused"
    assert error["details"] == [{"index": 1, "ref": "@e1"}]
    assert len(stored()) == 1


def test_an_item_delivers_a_request_made_earlier_in_the_batch(api: Api) -> None:
    old = api.observe("older request", kind="user_message")
    answer = bulk(
        api,
        [
            {"kind": "user_message", "content": "Ship v1"},
            {"kind": "agent_message", "content": "Shipped", "delivers": ["@e2", old["ref"]]},
        ],
    ).json()["events"]
    assert [e["ref"] for e in answer] == ["@e2", "@e3"]
    states = dict(Event.objects.filter(context__slug="alpha").values_list("seq", "request_state"))
    assert states[1] == "delivered" and states[2] == "delivered"
    assert Event.objects.get(context__slug="alpha", seq=2).delivered_by_seq == 3


def test_delivering_a_later_item_of_the_batch_is_refused(api: Api) -> None:
    response = bulk(
        api,
        [
            {"kind": "agent_message", "content": "Shipped", "delivers": ["@e2"]},
            {"kind": "user_message", "content": "Ship v1"},
        ],
    )
    assert response.status_code == 422
    assert stored() == []


def test_bulk_shape_errors(api: Api) -> None:
    assert error_of(bulk(api, []))["code"] == "invalid_request"
    too_many = [{"kind": "tool_result", "content": "x"}] * 1001
    assert bulk(api, too_many).status_code == 400
    unknown = bulk(api, [{"kind": "tool_result", "content": "x", "colour": "red"}])
    assert unknown.status_code == 400
    header = bulk(api, [{"kind": "tool_result", "content": "x"}], HTTP_IDEMPOTENCY_KEY="k")
    assert error_of(header)["code"] == "invalid_request"
    mixed = api.post("events/", {"events": [], "kind": "tool_result", "content": "x"})
    assert mixed.status_code == 400
    assert stored() == []


def test_bulk_needs_write_access_to_its_own_context(api: Api, beta: Any) -> None:
    other = Api("beta", None, api.client)
    response = other.post("events/", {"events": [{"kind": "tool_result", "content": "x"}]})
    assert response.status_code in (403, 404)
    assert stored("beta") == []


def test_bulk_items_cost_what_single_appends_cost(api: Api, beta_token: str) -> None:
    items = [
        {"kind": "tool_result", "content": "x" * 50_000},
        {"kind": "agent_message", "content": "short reply"},
        {"kind": "user_message", "content": "a question"},
    ]
    bulk(api, items)
    single = Api("beta", beta_token)
    for item in items:
        single.observe(item["content"], kind=item["kind"])
    for slug in ("alpha", "beta"):
        assert (
            Context.objects.get(slug=slug).used_tokens
            == Context.objects.get(slug="alpha").used_tokens
        )
    estimates = {
        slug: list(
            Event.objects.filter(context__slug=slug)
            .order_by("seq")
            .values_list("token_estimate", "is_observation", "active", "pending", "request_state")
        )
        for slug in ("alpha", "beta")
    }
    assert estimates["alpha"] == estimates["beta"]


def test_bulk_items_are_stored_exactly_as_single_appends_store_them(
    api: Api, beta_token: str
) -> None:
    tricky = 'quote " backslash \\ braces {a,b} comma, NULL null\nnew line\ttab 长任务 ✓ 🚀'
    items: list[dict[str, Any]] = [
        {"kind": "user_message", "content": tricky, "thread": "t-1", "idempotency_key": "k1"},
        {"kind": "tool_result", "content": "{}", "payload": {"n": None, "s": tricky, "l": [1.5]}},
        {"kind": "agent_message", "content": "NULL", "delivers": ["@e1"]},
        {"kind": "external_fact", "content": "", "payload": None, "idempotency_key": "k2"},
        {"kind": "tool_result", "content": "\\N", "payload": [], "thread": "t-2"},
    ]
    assert bulk(api, items).status_code == 201
    single = Api("beta", beta_token)
    for item in items:
        assert single.post("events/", item).status_code == 201
    columns = [
        "seq", "kind", "thread", "content", "payload", "idempotency_key", "size_chars",
        "token_estimate", "is_observation", "active", "status_version", "pending", "delivers",
        "request_state", "delivered_by_seq",
    ]  # fmt: skip
    rows = {
        slug: list(Event.objects.filter(context__slug=slug).order_by("seq").values_list(*columns))
        for slug in ("alpha", "beta")
    }
    assert rows["alpha"] == rows["beta"]
    assert rows["alpha"][0][3] == tricky and rows["alpha"][2][12] == [1]
    # ids follow the order of the batch
    ids = list(
        Event.objects.filter(context__slug="alpha").order_by("seq").values_list("id", flat=True)
    )
    assert ids == sorted(ids)


# A bulk append's error names the failing field of an item the one way the API names a
# place in a body everywhere else, `events[1].kind` (as `ops[2].body` in a transaction and
# DRF's own `events[0].payload.a`): the same batch never answers `events.1.kind` for one
# check and `events[0].content` for another.

GOOD = {"kind": "tool_result", "content": "fine"}


@pytest.mark.parametrize(
    ("item", "field"),
    [
        ({"kind": "bogus"}, "events[1].kind"),
        ({"kind": "tool_result", "content": 5}, "events[1].content"),
        ({"kind": "user_message", "content": " "}, "events[1].content"),
        ({"kind": "tool_result", "content": "a", "thread": "x y"}, "events[1].thread"),
        (
            {"kind": "tool_result", "content": "a", "idempotency_key": 3},
            "events[1].idempotency_key",
        ),
        ({"kind": "tool_result", "content": "a", "delivers": ["e1"]}, "events[1].delivers"),
        ({"kind": "tool_result", "content": "a", "colour": "red"}, "events[1].colour"),
        ("not an object", "events[1]"),
        # checked by the body's parser, before the items: the same style
        ({"kind": "tool_result", "content": "a\u0000"}, "events[1].content"),
        (
            {"kind": "tool_result", "content": "a", "payload": {"a": "\udc00"}},
            "events[1].payload.a",
        ),
    ],
)
def test_an_item_error_names_its_field_with_brackets(api: Api, item: Any, field: str) -> None:
    response = api.post("events/", {"events": [GOOD, item]})
    assert response.status_code == 400
    details = error_of(response)["details"]
    assert [d["field"] for d in details] == [field]
