"""The typed client (client/morphz_client) against a live server: every method, typed errors."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.search.indexer import drain
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")


@pytest.fixture
def mz(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("client-ctx", grace_ticks=2)
    client = MorphzClient(live_server.url, issue_token(context).raw)
    yield client
    client.close()


def test_every_method_round_trips(mz: Any) -> None:
    assert mz.slug == "client-ctx"  # discovered from the token
    assert mz.index()["contexts"] == ["/api/v1/contexts/client-ctx/"]
    assert [c["slug"] for c in mz.contexts()] == ["client-ctx"]
    request = mz.append_event("user_message", "ship it", thread="main")
    log = mz.append_event("tool_result", "x" * 5000, idempotency_key="log-1")
    assert mz.append_event("tool_result", "x" * 5000, idempotency_key="log-1")["ref"] == log["ref"]
    view = mz.evaluate(idempotency_key="turn-1")
    assert view["claimed"] == [request["ref"], log["ref"]]
    receipt = mz.submit(
        f"(context-tx (base-version {view['view_version']}) (derive release (goal v1)))",
        evaluation=view["id"],
    )
    assert receipt["version"] == 1
    receipt = mz.submit(
        ops=[
            {"op": "derive", "id": "log-digest", "from": [log["ref"]], "body": {"size": "5000"}},
            {"op": "relate", "subject": "log-digest", "name": "supports", "object": "release"},
        ],
        base_version=1,
        reason="digest",
    )
    assert receipt["version"] == 2
    action = mz.register_action("deploy", {"env": "staging"})
    assert action["request"] == "open"
    assert [e["seq"] for e in mz.iter_events(limit=2)] == [1, 2, 3, 4, 5]
    assert mz.events(kind="action")["events"][0]["ref"] == action["ref"]
    assert mz.read_event_text(log["ref"], chunk=1234) == "x" * 5000
    assert mz.read_event(log["seq"], length=10)["next_offset"] == 10
    assert [f["id"] for f in mz.frames()["frames"]] == ["log-digest", "release"]
    assert mz.frame("release")["revisions"][0]["body"] == {"goal": "v1"}
    assert mz.relations(subject="log-digest")["relations"][0]["object"] == "release"
    assert len(mz.transactions(frame="release")["transactions"]) == 2
    graph = mz.recall("release", direction="descendants")
    assert [n.get("id") for n in graph["nodes"]][:2] == ["release", "log-digest"]
    drain()
    assert mz.search("digest", type="frame")["hits"][0]["id"] == "log-digest"
    assert mz.context()["version"] == 2


def test_errors_are_typed_with_code_status_and_details(mz: Any) -> None:
    import morphz_client as m

    mz.submit("(context-tx (derive release (goal v1)))")
    with pytest.raises(m.ParseError) as parse:
        mz.submit("(context-tx (derive")
    assert parse.value.status == 400 and parse.value.details[0]["line"] == 1
    with pytest.raises(m.RuleViolationError) as rule:
        mz.submit("(context-tx (derive release (goal v2)))")
    assert rule.value.code == "frame_exists" and rule.value.details[0]["index"] == 0
    mz.submit("(context-tx (base-version 1) (revise release (goal v2)))")
    with pytest.raises(m.ConflictError) as conflict:
        mz.submit("(context-tx (base-version 1) (revise release (goal v3)))")
    assert conflict.value.details[0]["ref"] == "release"
    with pytest.raises(m.NotFoundError):
        mz.frame("missing")
    with pytest.raises(m.InvalidRequestError):
        mz.events(limit=0)
    with pytest.raises(m.StaleViewError):
        mz.recall("release", view_version=0)
    with pytest.raises(m.IdempotencyKeyReusedError):
        mz.append_event("tool_result", "a", idempotency_key="k")
        mz.append_event("tool_result", "b", idempotency_key="k")


def test_auth_and_maintenance_errors(live_server: Any, transactional_db: Any) -> None:
    import morphz_client as m

    tiny = create_context("tiny", capacity_tokens=100)
    token = issue_token(tiny).raw
    with pytest.raises(m.AuthError) as auth:
        m.MorphzClient(live_server.url, "mz_wrong", context="tiny").context()
    assert auth.value.status == 401 and auth.value.code == "not_authenticated"
    with m.MorphzClient(live_server.url, token, context="tiny") as mz:
        mz.append_event("tool_result", "word " * 400)
        with pytest.raises(m.MaintenanceRequiredError) as gate:
            mz.register_action("deploy")
        assert gate.value.status == 409
    with pytest.raises(m.NotFoundError):
        m.MorphzClient(live_server.url, token, context="other").context()


def test_append_events_goes_through_the_bulk_path_in_batches(mz: Any) -> None:
    from morphz_client import InvalidRequestError

    items = [
        {"kind": "external_fact", "content": f"fact {i}", "idempotency_key": f"f-{i}"}
        for i in range(7)
    ]
    answer = mz.append_events(items, batch=3)
    assert [e["ref"] for e in answer] == [f"@e{i}" for i in range(1, 8)]
    assert all(e["created"] for e in answer)
    again = mz.append_events(items)
    assert [e["ref"] for e in again] == [e["ref"] for e in answer]
    assert not any(e["created"] for e in again)
    with pytest.raises(InvalidRequestError):
        mz.append_events([{"kind": "external_fact", "content": "x"}, {"kind": "nope"}])
    assert mz.context()["tick"] == 0
    assert [e["seq"] for e in mz.iter_events()] == list(range(1, 8))
