"""R68: replica loss is never an error the caller sees: with the replica's server gone (or
its connections cut) reads are answered by the primary, with the newest state."""

from __future__ import annotations

from memory.contexts import create_context, issue_token
from reliability.replication import Standby
from tests.api.conftest import Api
from tests.replicas.conftest import primary_lsn, replica_db


def written(replica: Standby) -> tuple[Api, int]:
    ctx = create_context("lossy")
    api = Api("lossy", issue_token(ctx, name="agent").raw)
    api.commit('(context-tx (reason "first") (derive note (text "one")))')
    version = api.commit('(context-tx (reason "then") (revise note (text "two")))')["version"]
    replica.wait_for(primary_lsn())
    return api, version


def reads(api: Api, version: int) -> None:
    for params in ({}, {"min_version": 1}, {"min_version": version}):
        frame = api.get("frames/note/", params)
        assert frame.status_code == 200, frame.json()
        assert frame.json()["body"]["text"] == "two"
        recall = api.post("recall/", {"frame_id": "note", **params})
        assert recall.status_code == 200, recall.json()
        search = api.get("search/", {"q": "note", **params})
        assert search.status_code == 200, search.json()
        events = api.get("events/", params)
        assert events.status_code == 200, events.json()
        assert len(events.json()["events"]) == 2


@replica_db
def test_reads_go_on_when_the_replica_server_is_killed(replica: Standby) -> None:
    api, version = written(replica)
    assert api.get("frames/note/", {"min_version": 1}).status_code == 200  # pool warmed
    replica.kill9()
    reads(api, version)


@replica_db
def test_reads_go_on_when_the_replicas_connections_are_cut(replica: Standby) -> None:
    api, version = written(replica)
    assert api.get("frames/note/", {"min_version": 1}).status_code == 200  # pool warmed
    replica.sql(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    reads(api, version)
