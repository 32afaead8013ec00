"""Lexical search over frames and events (R33–R36), after the index worker ran."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.contexts import create_context
from memory.errors import InvalidRequest
from memory.models import Event
from memory.search.indexer import drain
from memory.search.query import search


def refs(result):
    return [h["ref"] for h in result["hits"]]


@pytest.fixture
def indexed(release_frame, first_example):
    agent = release_frame
    agent.commit(first_example.format(base=agent.version))  # retires @e42
    agent.chinese = agent.observe("用户要求：先暂停发布，等待确认", kind="user_message")
    agent.api = agent.observe(
        "The api gateway returned 200 for the Packaging step", kind="external_fact"
    )
    agent.commit(
        '(context-tx (derive plan (task "发布任务") (owner ops)) (derive gateway-note (says "API is up")))'
    )
    drain()
    return agent


def test_a_chinese_word_finds_a_frame_body_and_a_chinese_event(indexed):
    result = search(indexed.context, "发布")
    assert "plan" in refs(result)
    assert indexed.chinese in refs(result)
    plan = next(h for h in result["hits"] if h["ref"] == "plan")
    assert (
        plan["type"] == "frame"
        and plan["id"] == "plan"
        and plan["next"] == {"recall": {"frame_id": "plan"}}
    )
    assert {"text": "发布", "match": True} in plan["snippet_parts"]


def test_full_width_query_finds_ascii_text(indexed):
    found = refs(search(indexed.context, "ＡＰＩ"))
    assert indexed.api in found and "gateway-note" in found


def test_english_queries_are_case_insensitive(indexed):
    assert refs(search(indexed.context, "packaging")) == refs(search(indexed.context, "PACKAGING"))
    assert indexed.api in refs(search(indexed.context, "PACKAGING"))


def test_a_query_does_not_need_every_word_and_fuller_matches_rank_first(indexed):
    assert refs(search(indexed.context, "api gateway")) == refs(
        search(indexed.context, "gateway api")
    )
    some = refs(search(indexed.context, "api zebra"))
    assert indexed.api in some and "gateway-note" in some
    both = indexed.observe("the zebra api answered", kind="external_fact")
    drain()
    assert refs(search(indexed.context, "api zebra", type="event"))[0] == both
    assert search(indexed.context, "zebra quagga")["total"] == 1


def test_retired_events_and_frames_are_found(indexed):
    hit = next(
        h
        for h in search(indexed.context, "3000 passed", type="event")["hits"]
        if h["ref"] == "@e42"
    )
    assert hit["status"] == "retired" and hit["next"] == {"read": "@e42"}
    indexed.commit(
        "(context-tx (derive plan-v2 (from plan) (task later)) (relate plan-v2 supersedes plan) (retire plan))"
    )
    drain()
    frames = search(indexed.context, "发布", type="frame", status="retired")["hits"]
    assert [h["id"] for h in frames] == ["plan"]


def test_type_kind_status_and_thread_filters(indexed):
    assert all(h["type"] == "frame" for h in search(indexed.context, "发布", type="frame")["hits"])
    assert refs(search(indexed.context, "发布", kind="user_message")) == [indexed.chinese]
    assert indexed.chinese not in refs(search(indexed.context, "发布", kind="tool_result"))
    assert refs(search(indexed.context, "发布", thread="other")) == []
    statuses = {h["status"] for h in search(indexed.context, "发布", type="event")["hits"]}
    assert statuses <= {"active", "retired", "recorded"}


def test_time_range_filters(indexed):
    chinese = Event.objects.get(context=indexed.context, seq=int(indexed.chinese[2:]))
    after = chinese.created_at + timedelta(microseconds=1)
    assert indexed.chinese not in refs(search(indexed.context, "发布", since=after))
    assert indexed.chinese in refs(search(indexed.context, "发布", until=after))
    assert indexed.chinese in refs(
        search(indexed.context, "发布", since=chinese.created_at.isoformat())
    )
    assert indexed.chinese not in refs(search(indexed.context, "发布", until=chinese.created_at))


def test_lag_is_visible_until_the_worker_runs(indexed):
    indexed.commit('(context-tx (derive fresh-note (says "zephyr deployment")))')
    before = search(indexed.context, "zephyr")
    assert before["hits"] == []
    assert before["lag"]["pending_intents"] >= 2
    assert before["lag"]["oldest_pending_seconds"] >= 0
    drain()
    after = search(indexed.context, "zephyr")
    assert "fresh-note" in refs(after)
    assert after["lag"]["pending_intents"] == 0
    assert after["lag"]["oldest_pending_seconds"] == 0.0


def test_a_new_revision_replaces_the_old_text(indexed):
    indexed.commit('(context-tx (revise plan (task "回滚任务")))')
    drain()
    assert "plan" not in refs(search(indexed.context, "发布", type="frame"))
    assert "plan" in refs(search(indexed.context, "回滚", type="frame"))


def test_search_never_crosses_contexts(indexed):
    other = create_context("other-team")
    assert search(other, "发布")["hits"] == []


def test_hits_are_ranked_and_limited(indexed):
    for i in range(5):
        indexed.observe(f"发布 发布 发布 report {i}")
    drain()
    result = search(indexed.context, "发布", limit=3)
    assert len(result["hits"]) == 3
    scores = [h["score"] for h in result["hits"]]
    assert scores == sorted(scores, reverse=True)


@pytest.mark.parametrize(
    ("q", "kw", "code"),
    [
        ("", {}, "invalid_query"),
        ("!!! ...", {}, "invalid_query"),
        ("x" * 1001, {}, "invalid_query"),
        ("api", {"type": "note"}, "invalid_type"),
        ("api", {"status": "gone"}, "invalid_status"),
        ("api", {"kind": "gossip"}, "invalid_kind"),
        ("api", {"since": "yesterday"}, "invalid_time"),
        ("api", {"limit": 0}, "invalid_limit"),
        ("api", {"limit": 101}, "invalid_limit"),
        ("api", {"thread": "bad thread"}, "invalid_thread"),
    ],
)
def test_bad_queries_are_refused_with_clear_codes(indexed, q, kw, code):
    with pytest.raises(InvalidRequest) as caught:
        search(indexed.context, q, **kw)
    assert caught.value.code == code


@pytest.mark.parametrize(
    "q", ["release", "RELEASE", "release.", '"release"', "ＲＥＬＥＡＳＥ", "(Release)"]
)
def test_the_exact_frame_id_comes_first_however_the_query_is_written(release_frame, q):
    # Before, only the raw text lower-cased was compared: `release.` and `ＲＥＬＥＡＳＥ`
    # tokenise to the same word but left the frame `release` wherever its score put it.
    agent = release_frame
    for i in range(3):
        agent.observe(f"release release release notes {i}", kind="agent_message")
    agent.commit('(context-tx (derive release-notes (text "release release release")))')
    drain()
    assert search(agent.context, q)["hits"][0]["id"] == "release"


def test_an_offset_past_the_end_keeps_the_real_total(release_team):
    # Before, total was max(matches, offset + hits): offset=999 answered total 999.
    agent = release_team
    for i in range(14):
        agent.observe(f"release step {i}", kind="agent_message")
    drain()
    for offset in (0, 10, 14, 100, 999):
        result = search(agent.context, "release", limit=5, offset=offset)
        assert result["total"] == 14 and result["total_exact"] is True
    assert search(agent.context, "release", offset=999)["hits"] == []
    assert search(agent.context, "release", offset=999)["next_offset"] is None


def test_the_exact_frame_id_also_scores_highest_so_sorting_by_score_keeps_it_first(
    release_frame,
):
    # Before, the frame named by the query came first with a lower score than the hits
    # after it: a client re-sorting by score moved it down.
    agent = release_frame
    agent.commit('(context-tx (derive release-procedure (steps "release release release")))')
    for i in range(3):
        agent.observe(f"release release {i}", kind="agent_message")
    drain()
    hits = search(agent.context, "release")["hits"]
    assert hits[0]["id"] == "release"
    assert hits[0]["score"] > max(h["score"] for h in hits[1:])
    assert sorted(hits, key=lambda h: -h["score"])[0]["id"] == "release"
