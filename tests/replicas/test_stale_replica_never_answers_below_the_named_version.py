"""R68: a replica whose replay is paused (`pg_wal_replay_pause()`) is stale; a read that
names a version (`min_version`, the Morphz-Min-Version header, or by default the context as
the primary showed it) never sees an older state from it, while a read content with an
older state is served by it."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context, issue_token
from reliability.replication import Standby
from tests.api.conftest import Api
from tests.replicas.conftest import primary_lsn, replica_db


def note_text(response: Any) -> str:
    assert response.status_code == 200, response.json()
    return str(response.json()["body"]["text"])


def stale_pair(replica: Standby) -> tuple[Api, int, int]:
    """A context whose frame `note` reads "one" at the first version and "two" at the
    second, with the replica stopped at the first."""
    ctx = create_context("stale")
    api = Api("stale", issue_token(ctx, name="agent").raw)
    first = api.commit('(context-tx (reason "first") (derive note (text "one")))')["version"]
    replica.wait_for(primary_lsn())
    replica.pause_replay()
    second = api.commit('(context-tx (reason "second") (revise note (text "two")))')["version"]
    return api, first, second


@replica_db
def test_a_read_content_with_an_older_version_is_served_by_the_stale_replica(
    replica: Standby,
) -> None:
    api, first, _ = stale_pair(replica)
    assert note_text(api.get("frames/note/", {"min_version": first})) == "one"


@replica_db
def test_a_read_naming_the_new_version_never_sees_the_old_one(replica: Standby) -> None:
    api, _, second = stale_pair(replica)
    assert note_text(api.get("frames/note/", {"min_version": second})) == "two"
    header = {"HTTP_MORPHZ_MIN_VERSION": str(second)}
    assert note_text(api.get("frames/note/", **header)) == "two"
    frames = api.get("frames/", {"min_version": second}).json()["frames"]
    assert [f["body"]["text"] for f in frames if f["id"] == "note"] == ["two"]


@replica_db
def test_without_a_version_the_read_sees_the_callers_last_write(replica: Standby) -> None:
    api, _, second = stale_pair(replica)
    assert note_text(api.get("frames/note/")) == "two"
    events = api.get("events/").json()["events"]
    assert len([e for e in events if e["kind"] == "transaction"]) == second


@replica_db
def test_recall_and_search_naming_a_version_see_it(replica: Standby) -> None:
    api, _, second = stale_pair(replica)
    recall = api.post("recall/", {"frame_id": "note", "min_version": second})
    assert recall.status_code == 200, recall.json()
    assert recall.json()["version"] == second
    search = api.get("search/", {"q": "note", "min_version": second})
    assert search.status_code == 200, search.json()


@replica_db
def test_header_and_parameter_must_agree(replica: Standby) -> None:
    api, first, second = stale_pair(replica)
    response = api.get("frames/note/", {"min_version": first}, HTTP_MORPHZ_MIN_VERSION=str(second))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_request"
    bad = api.get("frames/note/", HTTP_MORPHZ_MIN_VERSION="two")
    assert bad.status_code == 400
