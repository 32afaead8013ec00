"""Search finds what a person means: ranking, Korean, identifiers, sentences,
emoji, totals and pages. Each test names the kind of input that used to fail."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.demo.player import load_demo
from memory.models import Context
from memory.search.indexer import drain
from memory.search.query import TOTAL_CAP, search


def refs(result):
    return [h["ref"] for h in result["hits"]]


@pytest.fixture
def demo(db, tmp_path: Path) -> Context:
    load_demo(tmp_path)
    drain()
    return Context.objects.get(slug="demo")


def test_the_demo_release_query_returns_the_release_frame_first(demo):
    result = search(demo, "release")
    first = result["hits"][0]
    assert (first["type"], first["id"]) == ("frame", "release")
    # Frames that say "release" come before events that merely mention it.
    types = [h["type"] for h in result["hits"]]
    assert types[: types.count("frame")] == ["frame"] * types.count("frame")
    assert types.count("frame") >= 3


def test_transaction_echoes_are_left_out_by_default_and_rank_below_their_frames(demo):
    default = search(demo, "release", limit=100)
    assert all(h["kind"] != "transaction" for h in default["hits"])
    with_tx = search(demo, "release", transactions=True, limit=100)
    kinds = [h["kind"] for h in with_tx["hits"]]
    assert "transaction" in kinds
    assert with_tx["hits"][0]["id"] == "release"
    # Every frame the transactions wrote about `release` outranks every echo.
    last_frame = max(i for i, h in enumerate(with_tx["hits"]) if h["type"] == "frame")
    first_tx = kinds.index("transaction")
    assert last_frame < first_tx
    only_tx = search(demo, "release", kind="transaction")
    assert only_tx["hits"] and {h["kind"] for h in only_tx["hits"]} == {"transaction"}


def test_an_exact_frame_id_is_on_top_even_when_other_documents_say_it_more(
    release_frame,
):
    agent = release_frame
    for i in range(3):
        agent.observe(f"release release release notes {i}", kind="agent_message")
    agent.commit(
        '(context-tx (derive release-notes (text "release release release")) '
        "(derive release-checklist (release yes)))"
    )
    drain()
    hits = search(agent.context, "release")["hits"]
    assert hits[0]["id"] == "release"
    assert search(agent.context, "Release-Notes")["hits"][0]["id"] == "release-notes"


def test_frame_fields_weigh_more_than_event_text(release_team):
    agent = release_team
    agent.observe("the canary went fine", kind="agent_message")
    agent.commit('(context-tx (derive rollout (status "canary")))')
    drain()
    hits = search(agent.context, "canary")["hits"]
    assert [h["type"] for h in hits] == ["frame", "event"]
    assert hits[0]["score"] > hits[1]["score"]


def test_a_korean_noun_finds_it_with_a_particle_attached(release_team):
    agent = release_team
    ref = agent.observe("테스트 결과를 확인했다", kind="agent_message")
    other = agent.observe("결론은 다음 주에 내린다", kind="agent_message")
    drain()
    assert refs(search(agent.context, "결과")) == [ref]
    assert refs(search(agent.context, "결과를")) == [ref]
    assert other not in refs(search(agent.context, "결과"))
    hit = search(agent.context, "결과")["hits"][0]
    assert {"text": "결과를", "match": True} in hit["snippet_parts"]


def test_chinese_and_japanese_words_still_do_not_match_inside_longer_words(release_team):
    agent = release_team
    tokyo = agent.observe("東京都に住んでいます", kind="agent_message")
    kyoto = agent.observe("京都へ行きました", kind="agent_message")
    drain()
    assert refs(search(agent.context, "京都")) == [kyoto]
    assert tokyo in refs(search(agent.context, "東京"))


@pytest.mark.parametrize(
    "q",
    ["create_user", "create user", "test_create_user", "createUser", "test_api", "test_api.py"],
)
def test_identifier_parts_find_a_pytest_failure(release_team, q):
    agent = release_team
    ref = agent.observe(
        "FAILED tests/test_api.py::test_create_user - AssertionError", kind="tool_result"
    )
    agent.observe("user story: create a new page", kind="agent_message")
    drain()
    assert refs(search(agent.context, q))[0] == ref


@pytest.mark.parametrize(
    ("text", "q"),
    [
        ("call fetchUserProfile() on retry", "user profile"),
        ("HTTPServer closed", "server"),
        ("settings in memory.search.RANK_POOL", "rank pool"),
        ("pinned to version 2.14.4 of pydantic", "2.14"),
        ("see src/memory/textindex.py line 40", "textindex"),
        ("std::vector<int> grows", "vector"),
    ],
)
def test_identifier_kinds_are_split_into_findable_parts(release_team, text, q):
    agent = release_team
    ref = agent.observe(text, kind="tool_result")
    drain()
    assert ref in refs(search(agent.context, q))


def test_a_question_in_plain_words_ranks_the_best_match_first(release_team):
    agent = release_team
    target = agent.observe(
        "Customer asked to cancel the flight to Atlanta; the refund was issued.",
        kind="user_message",
    )
    agent.observe("The flight to Denver was changed.", kind="user_message")
    # Not a message: a reply would be found by the words of the turn it answers.
    policy = agent.observe("Refund policy: refunds take five days.", kind="tool_result")
    drain()
    result = search(agent.context, "Hi, I need to cancel my upcoming flight to Atlanta please")
    assert refs(result)[0] == target
    assert result["total"] == 2 and policy not in refs(result)


def test_emoji_only_queries_find_the_emoji(release_team):
    agent = release_team
    rocket = agent.observe("shipped 🚀 at noon", kind="agent_message")
    agent.observe("shipped quietly", kind="agent_message")
    drain()
    assert refs(search(agent.context, "🚀")) == [rocket]
    assert search(agent.context, "🎉")["hits"] == []


def test_total_counts_every_match_and_offset_pages_beyond_the_first(release_team):
    agent = release_team
    made = [agent.observe(f"deploy window {i}", kind="agent_message") for i in range(25)]
    drain()
    first = search(agent.context, "deploy", limit=10)
    assert first["total"] == 25 and first["total_exact"] is True
    assert first["next_offset"] == 10
    second = search(agent.context, "deploy", limit=10, offset=10)
    third = search(agent.context, "deploy", limit=10, offset=20)
    assert third["next_offset"] is None and len(third["hits"]) == 5
    seen = refs(first) + refs(second) + refs(third)
    assert sorted(seen) == sorted(made) and len(set(seen)) == 25


def test_the_upgrade_migration_queues_every_existing_document_for_reindexing(release_team):
    import importlib

    from django.db import connection

    from memory.models import IndexIntent, SearchDocument

    agent = release_team
    agent.observe("FAILED tests/test_api.py::test_create_user", kind="tool_result")
    agent.commit('(context-tx (derive rollout (status "canary")))')
    drain()
    # A document as the index wrote it before ranking, parts and weights: whole tokens, no weights, no parts.
    SearchDocument.objects.filter(context=agent.context).update(tokens="'failed' 'tests'")
    assert search(agent.context, "create user")["hits"] == []
    migration = importlib.import_module("memory.migrations.0005_search_terms_reindex")
    with connection.cursor() as cursor:
        cursor.execute(migration.REINDEX)
    documents = SearchDocument.objects.filter(context=agent.context).count()
    assert IndexIntent.objects.filter(context=agent.context).count() == documents
    drain()
    assert refs(search(agent.context, "create user")) == ["@e1"]
    assert refs(search(agent.context, "canary")) == ["rollout"]


def test_the_best_match_is_found_however_many_newer_documents_match_less(release_team):
    # Before, candidates were the newest 1,000 documents holding any query word: an older
    # document holding the rarest word was never ranked.
    from memory.search.ranking import WIDE_POOL
    from memory.timeline.bulk import append_events

    agent = release_team
    best = agent.observe("zebra quartz migration notes", kind="agent_message")
    newer = [
        {"kind": "agent_message", "content": f"zebra ember {i}"} for i in range(WIDE_POOL + 50)
    ]
    for start in range(0, len(newer), 500):
        append_events(agent.context.pk, newer[start : start + 500])
    drain()
    result = search(agent.context, "zebra quartz ember")
    assert refs(result)[0] == best
    assert result["total"] == TOTAL_CAP and result["total_exact"] is False


def test_a_word_said_outranks_the_same_word_inside_an_identifier(release_team):
    agent = release_team
    # The tool call is newer and shorter: before, a part weighed as much as a word.
    said = agent.observe("please cancel the order now, thanks", kind="user_message")
    part = agent.observe('{"name": "cancel_order"}', kind="tool_result")
    drain()
    assert refs(search(agent.context, "cancel")) == [said, part]
    # ... and the identifier itself is found first by its own name.
    assert refs(search(agent.context, "cancel_order"))[0] == part


def test_common_words_score_candidates_but_do_not_select_them(release_team, monkeypatch):
    # Visiting every document of a common word is what made long questions slow: words the
    # statistics list as common only add their weight to documents rarer words found.
    from django.db import connection

    from memory.search import ranking, statistics
    from memory.timeline.bulk import append_events

    agent = release_team
    both = agent.observe("alpha beta", kind="agent_message")
    append_events(
        agent.context.pk,
        [{"kind": "agent_message", "content": f"alpha note {i}"} for i in range(300)],
    )
    only_rare = agent.observe("beta", kind="agent_message")
    drain()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    statistics.forget_statistics()
    monkeypatch.setattr(ranking, "WIDEN_BELOW", 1)  # (a small context widens to common words)
    try:
        plan = ranking.plan(
            agent.context.pk, [("alpha", []), ("beta", [])], "", {}, False, frozenset()
        )
        common = {item.literal for item in plan.items if item.common is not None}
        assert "'alpha'" in common and "'beta'" not in common
        result = search(agent.context, "alpha beta")
        assert refs(result)[:2] == [both, only_rare]
        assert result["total"] == 2  # documents holding only "alpha" were never candidates
    finally:
        statistics.forget_statistics()


def test_the_bm25_migration_queues_every_document_for_its_length_and_secondary_lexemes(
    release_team,
):
    import importlib

    from django.db import connection

    from memory.models import SearchDocument

    agent = release_team
    agent.observe('{"name": "cancel_order"}', kind="tool_result")
    drain()
    # A document as the index before it wrote lengths and secondary lexemes.
    SearchDocument.objects.filter(context=agent.context).update(
        tokens="'name' 'cancel_order' 'cancel' 'order'", length=0
    )
    migration = importlib.import_module("memory.migrations.0009_search_bm25")
    with connection.cursor() as cursor:
        cursor.execute(migration.REINDEX)
    drain()
    document = SearchDocument.objects.get(context=agent.context)
    assert document.length == 2
    assert "'~cancel':" in document.tokens and "'cancel':" not in document.tokens


def test_a_contexts_ranking_does_not_change_when_another_context_fills_with_its_words(
    release_frame,
):
    # Before, a word's role (selecting or only scoring) and a common word's weight came from
    # PostgreSQL's statistics over every context: once another context was full of
    # "release" (and ANALYZE ran), this context's frame `release` lost its id bonus and
    # its rank.
    from django.db import connection

    from memory.contexts import create_context
    from memory.search import statistics
    from memory.timeline.bulk import append_events

    agent = release_frame
    for i in range(3):
        agent.observe(f"release procedure step {i}: publish access granted", kind="agent_message")
    agent.commit('(context-tx (derive publish-access (note "release release procedure")))')
    drain()

    def ranking_of(q):
        statistics.forget_statistics()
        return [(h["ref"], h["score"]) for h in search(agent.context, q, limit=50)["hits"]]

    queries = ["release", "release procedure", "publish release"]
    before = {q: ranking_of(q) for q in queries}
    assert before["release"][0][0] == "release"
    other = create_context("release-heavy", name="Release heavy")
    for start in range(0, 3000, 500):
        append_events(
            other.pk,
            [
                {"kind": "agent_message", "content": f"release procedure publish {i}"}
                for i in range(start, start + 500)
            ],
        )
    drain()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_searchdocument")
    try:
        assert {q: ranking_of(q) for q in queries} == before
    finally:
        statistics.forget_statistics()


def test_a_questions_function_words_do_not_score_but_its_pronouns_and_question_words_do(
    release_team,
):
    # Contractions (I'd, I'm, don't) and single letters are function words like "the"; a
    # document full of them used to outrank the one that shares the question's subject.
    agent = release_team
    chatty = agent.observe("I'd say I'm sure I don't know", kind="user_message")
    subject = agent.observe("The blender arrived broken", kind="user_message")
    drain()
    result = search(
        agent.context, "I'd say the blender I'm sending back is broken, I don't want it"
    )
    assert refs(result) == [subject, chatty]
    assert result["query"]["tokens"] == ["say", "blender", "sending", "back", "broken", "want"]
    asked = search(agent.context, "When can I get my refund?")["query"]["tokens"]
    assert asked == ["when", "can", "get", "my", "refund"]
    assert refs(search(agent.context, "I don't")) == [chatty]  # only function words: as typed


def test_a_word_with_an_apostrophe_finds_it_however_the_apostrophe_is_typed(release_team):
    agent = release_team
    curly = agent.observe("The buyer\u2019s address changed", kind="agent_message")
    straight = agent.observe("Check the seller's address", kind="agent_message")
    drain()
    assert refs(search(agent.context, "buyer's")) == [curly]
    assert refs(search(agent.context, "seller\u2019s")) == [straight]
    parts = search(agent.context, "buyer's")["hits"][0]["snippet_parts"]
    assert {"text": "buyer\u2019s", "match": True} in parts


def test_every_word_of_a_long_question_scores_up_to_the_limit_after_function_words(
    release_team,
):
    from memory.search.ranking import SCORED_CLAUSES

    agent = release_team
    last = agent.observe("quokka sightings", kind="agent_message")
    beyond = agent.observe("wombat sightings", kind="agent_message")
    drain()
    # Function words do not use up the words that score: the question's last scoring word
    # still finds its document, the one after it no longer does.
    filler = [f"word{i} the of a to" for i in range(SCORED_CLAUSES - 1)]
    result = search(agent.context, " ".join([*filler, "quokka", "wombat"]))
    assert result["query"]["tokens"][-1] == "quokka"
    assert result["query"]["ignored"] == ["wombat"]
    assert refs(result) == [last]
    assert beyond not in refs(result)
