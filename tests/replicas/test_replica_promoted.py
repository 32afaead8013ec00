"""R68: a replica promoted to a primary (a failover) holds every commit acknowledged before
it was promoted and replays clean; Morphz pointed at it writes there. While it is still
configured as a replica, its history has left the primary's: reads that need the primary's
newer state never come from it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Context, TransactionRecord
from memory.replicas import reading_from
from memory.tx.engine import submit_transaction
from memory.versions.replay import verify_context
from reliability.replication import Standby
from tests.api.conftest import Api
from tests.replicas.conftest import ALIAS, new_standby, primary_lsn, replica_db, use_replica


@pytest.fixture
def promoted(replica: Standby) -> Iterator[Standby]:
    """A standby of its own (promotion is for good), configured as the replica."""
    server = new_standby("promoted")
    use_replica(server)
    yield server
    server.remove()
    use_replica(replica)


@replica_db
def test_a_promoted_replica_holds_every_acknowledged_commit(promoted: Standby) -> None:
    ctx = create_context("failover")
    api = Api("failover", issue_token(ctx, name="agent").raw)
    acked = [
        api.commit(f'(context-tx (reason "step {i}") (derive n{i} (text "v{i}")))')["version"]
        for i in range(5)
    ]
    promoted.wait_for(primary_lsn())
    promoted.promote()

    # Still listed as a replica, it never gets the primary's later commits.
    later = api.commit('(context-tx (reason "after") (revise n0 (text "after")))')["version"]
    frame = api.get("frames/n0/")
    assert frame.status_code == 200 and frame.json()["body"]["text"] == "after"
    assert api.get("frames/n0/", {"min_version": later}).json()["body"]["text"] == "after"

    # Morphz pointed at the promoted server: everything acknowledged is there, the history
    # replays to the stored state, and it takes writes.
    with reading_from(ALIAS):
        there = Context.objects.get(slug="failover")
        versions = set(
            TransactionRecord.objects.filter(context=there, status="committed").values_list(
                "committed_version", flat=True
            )
        )
        assert set(acked) <= versions
        assert later not in versions
        assert verify_context(there) == []
        receipt = submit_transaction(there.pk, text='(context-tx (derive after-failover (x "1")))')
        assert receipt.receipt["version"] == acked[-1] + 1
