"""R68: the explorer's page load may read its snapshot from a replica, and then only from
one that shows the context as the primary did when the page was asked for: a stale replica
never paints an older state."""

from __future__ import annotations

import json
import re

from django.contrib.auth import get_user_model
from django.test import Client

from memory.contexts import create_context, issue_token
from reliability.replication import Standby
from tests.api.conftest import Api
from tests.replicas.conftest import primary_lsn, replica_db


def painted_note(client: Client) -> object:
    page = client.get("/contexts/paint/")
    assert page.status_code == 200
    found = re.search(
        rb'<script id="snapshot-data" type="application/json">(.*?)</script>', page.content, re.S
    )
    assert found is not None
    snapshot = json.loads(found.group(1))
    return [f["body"] for f in snapshot["frames"] if f["id"] == "note"]


@replica_db
def test_a_stale_replica_never_paints_an_older_state(replica: Standby) -> None:
    ctx = create_context("paint")
    api = Api("paint", issue_token(ctx, name="agent").raw)
    api.commit('(context-tx (reason "first") (derive note (text "one")))')
    get_user_model().objects.create_user("staff", password="pw-staff-1", is_staff=True)
    client = Client()
    client.login(username="staff", password="pw-staff-1")
    replica.wait_for(primary_lsn())
    assert painted_note(client) == [{"text": "one"}]
    replica.pause_replay()
    api.commit('(context-tx (reason "second") (revise note (text "two")))')
    assert painted_note(client) == [{"text": "two"}]
