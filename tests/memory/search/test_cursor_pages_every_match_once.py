"""Search pages past 1,000 matches with a cursor bound to the query and to the documents
as of the first page: no repeats and no skips while new matches arrive (issue 30).

The searches filter by kind: unfiltered, a word held by 1,260 of 14,000 documents would
select among the newest 10,000 only (docs/search.md, a long history)."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.bulk import append_events

MATCHES = 1_260
KIND = "tool_result"


@pytest.fixture
def sightings(release_team) -> set[str]:
    """1,260 events saying "kestrel" among 13,000 others (a word in a tenth of them)."""
    events = [{"kind": "tool_result", "content": f"filler note {n}"} for n in range(13_000)]
    for n in range(MATCHES):
        events[n * 10 + 3] = {"kind": "tool_result", "content": f"kestrel sighting {n}"}
    refs: list[str] = []
    for start in range(0, len(events), 1000):
        refs += [
            r.event.ref
            for r in append_events(release_team.context.pk, events[start : start + 1000])
        ]
    drain()
    return {ref for ref, event in zip(refs, events, strict=True) if "kestrel" in event["content"]}


def test_a_cursor_pages_through_every_match_once_while_new_ones_arrive(release_team, sightings):
    seen: list[str] = []
    page = search(release_team.context, "kestrel", kind=KIND, limit=100)
    assert page["next_offset"] == 100
    pages = 1
    while True:
        seen += [hit["ref"] for hit in page["hits"]]
        if page["next_cursor"] is None:
            break
        # New matches between two pages, better ranked (shorter) than the old ones.
        release_team.observe("kestrel")
        release_team.observe(f"kestrel again {pages}")
        drain()
        page = search(
            release_team.context, "kestrel", kind=KIND, limit=100, cursor=page["next_cursor"]
        )
        pages += 1
    assert len(seen) == len(set(seen))
    assert set(seen) == sightings
    assert pages == 13


def test_offset_paging_still_stops_at_a_thousand(release_team, sightings):
    page = search(release_team.context, "kestrel", kind=KIND, limit=100, offset=900)
    assert page["next_offset"] is None
    assert page["next_cursor"] is not None


def test_an_offset_page_ends_at_the_thousandth_hit_and_its_cursor_goes_on(release_team, sightings):
    # The window asked for (990-1009) crosses 1,000: the page holds hits 990-999 only.
    before = search(release_team.context, "kestrel", kind=KIND, limit=100, offset=900)
    page = search(release_team.context, "kestrel", kind=KIND, limit=20, offset=990)
    assert [h["ref"] for h in page["hits"]] == [h["ref"] for h in before["hits"][-10:]]
    assert page["next_offset"] is None
    after = search(release_team.context, "kestrel", kind=KIND, limit=20, cursor=page["next_cursor"])
    assert len(after["hits"]) == 20
    assert not {h["ref"] for h in after["hits"]} & {h["ref"] for h in page["hits"]}


def test_a_made_up_cursor_is_refused(release_team):
    release_team.observe("kestrel")
    drain()
    with pytest.raises(InvalidRequest) as refused:
        search(release_team.context, "kestrel", cursor="not-a-cursor")
    assert refused.value.code == "invalid_cursor"
    assert refused.value.details == [{"field": "cursor", "reason": "bad_signature"}]


def test_a_cursor_sent_with_another_query_is_refused(release_team):
    for n in range(5):
        release_team.observe(f"kestrel {n} falcon")
    drain()
    cursor = search(release_team.context, "kestrel", limit=2)["next_cursor"]
    for other in ({"q": "falcon"}, {"q": "kestrel", "kind": "user_message"}):
        with pytest.raises(InvalidRequest) as refused:
            search(release_team.context, **{"q": "kestrel", **other}, cursor=cursor)
        assert refused.value.code == "invalid_cursor"
        assert refused.value.details == [{"field": "cursor", "reason": "other_query"}]
    assert search(release_team.context, "kestrel", limit=2, cursor=cursor)["hits"]


@pytest.mark.parametrize("offset", [0, 1])
def test_a_cursor_with_an_offset_is_refused(release_team, offset):
    for n in range(3):
        release_team.observe(f"kestrel {n}")
    drain()
    cursor = search(release_team.context, "kestrel", limit=1)["next_cursor"]
    with pytest.raises(InvalidRequest) as refused:
        search(release_team.context, "kestrel", offset=offset, cursor=cursor)
    assert refused.value.code == "invalid_offset"
