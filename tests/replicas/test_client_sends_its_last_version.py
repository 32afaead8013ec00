"""R68: the Python client sends the newest version it saw (Morphz-Min-Version), so a server
reading from replicas may answer it from one that holds the client's own writes even when
it has not replayed newer writes of others; without the header the server would wait for
the newest state or ask the primary."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context, issue_token
from reliability.replication import Standby
from tests.api.conftest import Api
from tests.replicas.conftest import primary_lsn, replica_db


@replica_db
def test_the_client_reads_its_own_write_from_a_replica_behind_others(
    replica: Standby, live_server: Any
) -> None:
    from morphz_client import MorphzClient

    context = create_context("own-writes")
    other = Api("own-writes", issue_token(context, name="other").raw)
    with MorphzClient(live_server.url, issue_token(context, name="mine").raw) as mine:
        receipt = mine.submit('(context-tx (reason "mine") (derive note (text "mine")))')
        assert mine.seen_version == receipt["version"]
        replica.wait_for(primary_lsn())
        replica.pause_replay()
        other.commit('(context-tx (reason "theirs") (revise note (text "theirs")))')
        # The replica holds the client's write (not the other's): it may answer, and does.
        assert mine.frame("note")["body"] == {"text": "mine"}
        mine.seen_version = None  # a client that says nothing gets the newest state
        assert mine.frame("note")["body"] == {"text": "theirs"}
