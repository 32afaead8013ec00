"""The client's `append_events` sends the items in batches; a bad item's error names its
index in the list the caller gave (`details[].index`, `events[5].kind`, the message), not
its index inside the batch that carried it, and says how many items before it were
written (`appended`, the earlier batches' events)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Event
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")


@pytest.fixture
def mz(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("bulk-ctx")
    client = MorphzClient(live_server.url, issue_token(context).raw)
    yield client
    client.close()


def test_a_bad_item_in_a_later_batch_is_named_by_its_own_index(mz: Any) -> None:
    from morphz_client import InvalidRequestError

    items: list[dict[str, Any]] = [{"kind": "tool_result", "content": f"ok {i}"} for i in range(7)]
    items[5] = {"kind": "bogus", "content": "x"}
    with pytest.raises(InvalidRequestError) as raised:
        mz.append_events(items, batch=3)
    error = raised.value
    assert error.code == "invalid_kind"
    assert error.details == [{"index": 5, "field": "events[5].kind"}]
    assert error.message.startswith("events[5]: ")
    assert [e["seq"] for e in error.appended] == [1, 2, 3]  # the first batch is written
    assert Event.objects.filter(context__slug="bulk-ctx").count() == 3


def test_a_bad_item_in_the_first_batch_keeps_its_index(mz: Any) -> None:
    from morphz_client import InvalidRequestError

    items = [{"kind": "tool_result", "content": "ok"}, {"kind": "tool_result", "content": 5}]
    with pytest.raises(InvalidRequestError) as raised:
        mz.append_events(items, batch=3)
    assert raised.value.details == [{"index": 1, "field": "events[1].content"}]
    assert raised.value.appended == []
