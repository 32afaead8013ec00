"""The client's `append_events` counts bytes as well as items: a list whose batch of 500
would pass the server's request body limit is sent in parts under it, in order, each item
once; one item over the limit alone is refused by its index."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Event
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")

LIMIT = 20_000


@pytest.fixture
def mz(live_server: Any, transactional_db: Any, settings: Any) -> Any:
    from morphz_client import MorphzClient

    settings.MAX_REQUEST_BYTES = LIMIT
    context = create_context("bytes-ctx")
    client = MorphzClient(live_server.url, issue_token(context).raw)
    yield client
    client.close()


def test_a_list_over_the_body_limit_is_sent_in_parts_in_order(mz: Any) -> None:
    # 30 items of 3,000 characters: 90 KB in one batch of 500, over the 20 KB limit. Some
    # are non-ASCII, which the wire sends as UTF-8 and a size estimate must not undercount.
    items = [
        {"kind": "tool_result", "content": f"{i:03d} " + ("é" if i % 2 else "x") * 2996}
        for i in range(30)
    ]
    answer = mz.append_events(items)
    assert [e["ref"] for e in answer] == [f"@e{i}" for i in range(1, 31)]
    stored = Event.objects.filter(context__slug="bytes-ctx").order_by("seq")
    assert [e.content[:3] for e in stored] == [f"{i:03d}" for i in range(30)]
    # Later calls pack by the limit learned from the first refusal, without another one.
    more = mz.append_events([{"kind": "tool_result", "content": "y" * 3000}] * 12)
    assert [e["seq"] for e in more] == list(range(31, 43))


def test_one_item_over_the_limit_alone_is_named_and_earlier_parts_stay(mz: Any) -> None:
    from morphz_client import TooLargeError

    items = [{"kind": "tool_result", "content": "ok " * 1000} for _ in range(8)]
    items[6] = {"kind": "tool_result", "content": "z" * (LIMIT + 1)}
    with pytest.raises(TooLargeError) as raised:
        mz.append_events(items)
    error = raised.value
    assert {"index": 6, "field": "events[6]"} in error.details
    assert [e["seq"] for e in error.appended] == [1, 2, 3, 4, 5, 6]
    assert Event.objects.filter(context__slug="bytes-ctx").count() == 6
