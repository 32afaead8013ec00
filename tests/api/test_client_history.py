"""The typed client's history methods against a live server: as_of, diff, fork, freeze,
evaluations, and a keyed fork retried after its answer was lost."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory.contexts import create_context, issue_token
from memory.models import Context
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")


@pytest.fixture
def mz(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("hist-ctx", grace_ticks=2)
    client = MorphzClient(live_server.url, issue_token(context).raw)
    client.base_url = live_server.url
    yield client
    client.close()


def test_history_methods_round_trip(mz: Any) -> None:
    from morphz_client import MorphzClient
    from morphz_client.errors import MorphzAPIError

    log = mz.append_event("tool_result", "suite passed")
    view = mz.evaluate()
    mz.submit(f"(context-tx (derive release (from {log['ref']}) (goal v1)))", evaluation=view["id"])
    mz.submit("(context-tx (revise release (goal v2)))")
    assert mz.frame("release", as_of=1)["body"] == {"goal": "v1"}
    assert [f["id"] for f in mz.frames(as_of=0)["frames"]] == []
    assert mz.relations(as_of=1)["relations"] == []
    assert mz.recall("release", as_of=1)["version"] == 1
    change = mz.diff(1, 2)
    assert change["frames"]["revised"][0]["after"] == {"goal": "v2"}
    assert mz.evaluations()["evaluations"][0]["claimed"] == [log["ref"]]
    assert mz.evaluation(view["id"])["input"]["text"] == view["text"]

    fork = mz.fork(slug="hist-fork", at_version=1)
    assert fork["forked_from"] == {"slug": "hist-ctx", "version": 1, "tick": 1}
    with MorphzClient(mz.base_url, fork["token"]) as other:
        assert other.slug == "hist-fork"
        assert other.frame("release")["body"] == {"goal": "v1"}
        assert other.context()["forked_from"]["version"] == 1

    assert mz.freeze()["frozen"] is True
    with pytest.raises(MorphzAPIError) as caught:
        mz.append_event("tool_result", "refused")
    assert caught.value.code == "context_frozen" and caught.value.status == 409
    assert mz.frames()["frames"]
    with pytest.raises(MorphzAPIError) as caught:  # unfreezing takes an admin token (R65)
        mz.unfreeze()
    assert caught.value.code == "scope_insufficient" and caught.value.status == 403
    admin_token = issue_token(Context.objects.get(slug="hist-ctx"), scope="admin").raw
    with MorphzClient(mz.base_url, admin_token) as admin:
        assert admin.unfreeze()["frozen"] is False
    mz.append_event("tool_result", "accepted")


class _AnswerLost(httpx.HTTPTransport):
    """Delivers the first fork request, then drops the connection before its answer."""

    def __init__(self) -> None:
        super().__init__()
        self.forks = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        if request.url.path.endswith("/forks/"):
            self.forks += 1
            if self.forks == 1:
                response.read()
                raise httpx.ReadError("connection dropped", request=request)
        return response


def test_a_fork_with_a_key_is_retried_after_a_lost_answer_and_made_once(
    live_server: Any, transactional_db: Any
) -> None:
    from morphz_client import MorphzClient

    context = create_context("hist-keyed")
    transport = _AnswerLost()
    http = httpx.Client(base_url=live_server.url, transport=transport)
    with MorphzClient(live_server.url, issue_token(context).raw, http=http, retry_wait=0) as mz:
        fork = mz.fork(slug="hist-keyed-fork", idempotency_key="fk-1")
        assert mz.fork(slug="hist-keyed-fork", idempotency_key="fk-1") == fork
        with MorphzClient(live_server.url, fork["token"]) as other:
            assert other.slug == "hist-keyed-fork"
    http.close()
    assert transport.forks == 3
    assert Context.objects.filter(forked_from=context).count() == 1
