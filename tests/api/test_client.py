"""The typed client (client/morphz_client) against a live server: every method, typed errors."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory.contexts import create_context, issue_token
from memory.models import Event, Frame
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


# The client's `append_events` sends the items in batches; a bad item's error names its
# index in the list the caller gave (`details[].index`, `events[5].kind`, the message), not
# its index inside the batch that carried it, and says how many items before it were
# written (`appended`, the earlier batches' events).


@pytest.fixture
def mz_bulk(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("bulk-ctx")
    client = MorphzClient(live_server.url, issue_token(context).raw)
    yield client
    client.close()


def test_a_bad_item_in_a_later_batch_is_named_by_its_own_index(mz_bulk: Any) -> None:
    from morphz_client import InvalidRequestError

    items: list[dict[str, Any]] = [{"kind": "tool_result", "content": f"ok {i}"} for i in range(7)]
    items[5] = {"kind": "bogus", "content": "x"}
    with pytest.raises(InvalidRequestError) as raised:
        mz_bulk.append_events(items, batch=3)
    error = raised.value
    assert error.code == "invalid_kind"
    assert error.details == [{"index": 5, "field": "events[5].kind"}]
    assert error.message.startswith("events[5]: ")
    assert [e["seq"] for e in error.appended] == [1, 2, 3]  # the first batch is written
    assert Event.objects.filter(context__slug="bulk-ctx").count() == 3


def test_a_bad_item_in_the_first_batch_keeps_its_index(mz_bulk: Any) -> None:
    from morphz_client import InvalidRequestError

    items = [{"kind": "tool_result", "content": "ok"}, {"kind": "tool_result", "content": 5}]
    with pytest.raises(InvalidRequestError) as raised:
        mz_bulk.append_events(items, batch=3)
    assert raised.value.details == [{"index": 1, "field": "events[1].content"}]
    assert raised.value.appended == []


# `mz_json_form.submit({...})` with the transaction's JSON form as one dict commits like the keywords
# (`ops=`, `base_version=`, `reason=`); a key the form does not have is a TypeError naming it
# and the keys it does have, before any request (it used to reach the server as `text` and
# come back "Not a valid string").


@pytest.fixture
def mz_json_form(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("json-form")
    client = MorphzClient(live_server.url, issue_token(context).raw, context="json-form")
    yield client
    client.close()


def test_the_json_form_as_a_dict_commits(mz_json_form: Any) -> None:
    obs = mz_json_form.append_event("user_message", "ship v1 when the tests pass")
    receipt = mz_json_form.submit(
        {
            "base_version": mz_json_form.context()["version"],
            "reason": "goal noted",
            "ops": [
                {"op": "derive", "id": "release", "from": [obs["ref"]], "body": {"goal": "v1"}}
            ],
        }
    )
    assert receipt["version"] == 1
    assert Frame.objects.get(context__slug="json-form", frame_id="release").body == {"goal": "v1"}


@pytest.mark.parametrize(
    ("form", "named"),
    [
        ({"text": "(context-tx)", "ops": []}, "'text'"),
        ({"base-version": 0, "ops": []}, "'base-version'"),
        ({"base_version": 0, "reason": "no ops"}, "needs ops"),
    ],
)
def test_a_key_the_json_form_lacks_is_named(
    mz_json_form: Any, form: dict[str, Any], named: str
) -> None:
    with pytest.raises(TypeError) as raised:
        mz_json_form.submit(form)
    assert named in str(raised.value) and "base_version, reason and ops" in str(raised.value)
    assert mz_json_form.context()["version"] == 0


# The client never lets a value it puts into a URL path name another resource: a frame id
# or an evaluation id the server could not have made is refused before any request
# (`InvalidPathValueError`, a ValueError), instead of reading `transactions/` or an `as_of`
# view as if it were the frame asked for.


@pytest.fixture
def mz_paths(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("paths")
    sent: list[str] = []
    http = httpx.Client(
        base_url=live_server.url,
        event_hooks={"request": [lambda request: sent.append(request.url.path)]},
    )
    client = MorphzClient(live_server.url, issue_token(context).raw, http=http)
    client.sent = sent
    yield client
    client.close()
    http.close()


@pytest.mark.parametrize(
    "frame_id", ["../transactions", "release/?as_of=1#", "..", "Release", "", "a b"]
)
def test_a_frame_id_the_server_could_not_hold_is_refused_before_sending(
    mz_paths: Any, frame_id: str
) -> None:
    from morphz_client import InvalidPathValueError

    sent = len(mz_paths.sent)
    with pytest.raises(InvalidPathValueError) as caught:
        mz_paths.frame(frame_id)
    assert caught.value.code == "invalid_frame_id"
    assert isinstance(caught.value, ValueError)
    assert len(mz_paths.sent) == sent  # nothing went to the server


@pytest.mark.parametrize("ref", [True, -1, 0, None, 1.5, "@e0", "e5", "@e1/../../"])
def test_an_event_ref_that_is_not_one_is_refused_before_sending(mz_paths: Any, ref: Any) -> None:
    from morphz_client import InvalidRefError

    sent = len(mz_paths.sent)
    with pytest.raises(InvalidRefError):
        mz_paths.read_event(ref)
    assert len(mz_paths.sent) == sent


@pytest.mark.parametrize("evaluation_id", ["1/../../", 0, True, "7"])
def test_an_evaluation_id_that_is_not_a_positive_integer_is_refused(
    mz_paths: Any, evaluation_id: Any
) -> None:
    from morphz_client import InvalidPathValueError

    with pytest.raises(InvalidPathValueError):
        mz_paths.evaluation(evaluation_id)


def test_a_well_formed_unknown_frame_is_still_asked_for(mz_paths: Any) -> None:
    from morphz_client import NotFoundError

    with pytest.raises(NotFoundError):
        mz_paths.frame("release-v9")
    assert mz_paths.sent[-1].endswith("/frames/release-v9/")
