"""Erasure (R64) in memory/: the erased text leaves every stored copy, sizes stay, and the
history still replays (every test here ends with the replay check, tests/conftest.py)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.erasure import erase as erasure
from memory.erasure.erase import NotErasable, UnknownRef, erase
from memory.errors import InvalidRequest
from memory.models import (
    Context,
    Erasure,
    Evaluation,
    Event,
    Frame,
    FrameRevision,
    SearchDocument,
    TransactionRecord,
)
from memory.search.indexer import drain
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event
from memory.tx.engine import Author, submit_transaction
from memory.versions.forks import fork_context
from memory.versions.replay import verify_context

CARD = "4111 1111 1111 1111"
CANARY = "zebra-canary-7731"
AGENT = Author("agent", "agent")


def _everything(context: Context) -> str:
    """Every stored text of a context, as one string."""
    parts: list[Any] = []
    for e in Event.objects.filter(context=context):
        parts += [e.content, json.dumps(e.payload, ensure_ascii=False)]
    for r in TransactionRecord.objects.filter(context=context):
        parts += [r.text, r.reason, json.dumps([r.ops, r.receipt, r.errors], ensure_ascii=False)]
    for f in Frame.objects.filter(context=context):
        parts += [json.dumps(f.body, ensure_ascii=False), f.retire_reason or ""]
    for v in FrameRevision.objects.filter(frame__context=context):
        parts.append(json.dumps(v.body, ensure_ascii=False))
    for ev in Evaluation.objects.filter(context=context):
        parts.append(json.dumps(ev.result, ensure_ascii=False))
    return "\n".join(str(p) for p in parts)


@pytest.fixture
def story(db: Any) -> Context:
    ctx = create_context("story", capacity_tokens=50_000)
    append_event(ctx.pk, kind="user_message", content=f"my card is {CARD}, note {CANARY}")
    append_event(ctx.pk, kind="tool_result", content="unrelated output, stays")
    evaluate(ctx.pk)
    submit_transaction(
        ctx.pk,
        text=f'(context-tx (reason "store {CANARY}") (derive card (from @e1) (number "{CARD}") '
        f'(note "{CANARY}")) (derive other (from @e2) (kept "visible words")) '
        "(relate card about other))",
        author=AGENT,
    )
    evaluate(ctx.pk)
    drain(context_id=ctx.pk)
    return Context.objects.get(pk=ctx.pk)


def test_erasing_an_event_and_its_frame_leaves_no_copy(story: Context) -> None:
    before = {e.seq: (e.size_chars, e.token_estimate) for e in Event.objects.filter(context=story)}
    frame_tokens = dict(
        Frame.objects.filter(context=story).values_list("frame_id", "token_estimate")
    )
    assert CANARY in _everything(story)
    result = erase(story.pk, refs=["@e1", "card"], reason="GDPR request 12", erased_by="ada")
    story.refresh_from_db()
    text = _everything(story)
    assert CANARY not in text
    assert "4111" not in text
    assert "visible words" in text and "unrelated output, stays" in text
    # The skeleton stays: sizes, token estimates, versions, relations.
    after = {e.seq: (e.size_chars, e.token_estimate) for e in Event.objects.filter(context=story)}
    assert after[1] == before[1] and after[2] == before[2]
    assert frame_tokens == dict(
        Frame.objects.filter(context=story).values_list("frame_id", "token_estimate")
    )
    assert Frame.objects.get(context=story, frame_id="card").relations_out.count() == 1
    assert {t.target for t in result.tombstones} == {"event", "frame"}
    assert Erasure.objects.filter(context=story).count() == 2
    assert verify_context(story) == []


def test_search_documents_are_rebuilt_from_the_masked_text(story: Context) -> None:
    words = SearchDocument.objects.filter(context=story, tokens__icontains="zebra")
    assert words.exists()
    erase(story.pk, refs=["@e1", "card"], reason="asked", erased_by="ada")
    assert not SearchDocument.objects.filter(context=story, tokens__icontains="zebra").exists()
    assert not SearchDocument.objects.filter(context=story, tokens__icontains="4111").exists()


def test_a_card_number_is_erased_however_it_is_spaced(db: Any) -> None:
    ctx = create_context("cards")
    append_event(ctx.pk, kind="user_message", content="first 4111111111111111 then")
    append_event(ctx.pk, kind="tool_result", content="again 4111-1111-1111-1111 here")
    append_event(ctx.pk, kind="tool_result", content="other 5500 0000 0000 0004 kept")
    erase(ctx.pk, patterns=[CARD], reason="card", erased_by="ada")
    texts = list(
        Event.objects.filter(context=ctx).order_by("seq").values_list("content", flat=True)
    )
    assert "4111" not in "".join(texts)
    assert texts[0].startswith("first ") and texts[0].endswith(" then")
    assert "5500 0000 0000 0004" in texts[2]
    assert verify_context(ctx) == []


def test_a_span_erases_part_of_an_event(db: Any) -> None:
    ctx = create_context("spans")
    append_event(ctx.pk, kind="user_message", content="call me at 555-0199 tomorrow")
    erase(ctx.pk, spans=[{"ref": "@e1", "start": 11, "end": 19}], reason="phone", erased_by="x")
    content = Event.objects.get(context=ctx, seq=1).content
    assert content.startswith("call me at ") and content.endswith(" tomorrow")
    assert "555-0199" not in content


def test_an_erasure_reaches_every_fork(story: Context) -> None:
    fork = fork_context(story.pk, slug="story-fork").context
    child = fork_context(fork.pk, slug="story-child").context
    erase(fork.pk, refs=["@e1", "card"], reason="lineage", erased_by="ada")
    for context in (story, fork, child):
        assert CANARY not in _everything(context), context.slug
        assert Erasure.objects.filter(context=context).count() == 2
    assert Erasure.objects.get(context=story, target="event").origin == "story-fork"


@pytest.mark.django_db(transaction=True)
def test_a_fork_made_while_the_erasure_reads_its_lineage_is_erased(monkeypatch: Any) -> None:
    """The erasure reads the lineage, then locks it: a fork committed in between (on its
    own connection, while the erasure's thread is paused after the read) is erased too."""
    source = create_context("story", capacity_tokens=50_000)
    append_event(source.pk, kind="user_message", content=f"note {CANARY}")
    read, resume = threading.Event(), threading.Event()
    real = erasure.lineage

    def lineage(context_id: int) -> list[int]:
        members = real(context_id)
        if not read.is_set():
            read.set()
            resume.wait(10)
        return members

    def erasing() -> None:
        try:
            erase(source.pk, patterns=[CANARY], reason="lineage", erased_by="ada")
        finally:
            connection.close()

    monkeypatch.setattr(erasure, "lineage", lineage)
    worker = threading.Thread(target=erasing)
    worker.start()
    assert read.wait(10)
    fork = fork_context(source.pk, slug="story-fork").context
    resume.set()
    worker.join(10)
    assert CANARY not in _everything(source)
    assert CANARY not in _everything(fork)
    assert Erasure.objects.filter(context=fork).count() == 1


def test_bad_requests_change_nothing(story: Context) -> None:
    with pytest.raises(InvalidRequest):
        erase(story.pk, refs=["@e1"], reason="  ", erased_by="x")
    with pytest.raises(UnknownRef):
        erase(story.pk, refs=["@e99"], reason="r", erased_by="x")
    with pytest.raises(UnknownRef):
        erase(story.pk, refs=["nope"], reason="r", erased_by="x")
    with pytest.raises(NotErasable):
        erase(story.pk, refs=["@e3"], reason="r", erased_by="x")
    with pytest.raises(InvalidRequest):
        erase(story.pk, spans=[{"ref": "@e1", "start": 5, "end": 500}], reason="r", erased_by="x")
    assert CANARY in _everything(story)
    assert not Erasure.objects.exists()


def test_the_command_erases_and_refuses_clearly(story: Context) -> None:
    from io import StringIO

    from django.core.management import CommandError, call_command

    out = StringIO()
    call_command(
        "erase_context",
        "story",
        "--ref",
        "@e1",
        "--ref",
        "card",
        "--reason",
        "ticket 9",
        "--by",
        "dpo",
        stdout=out,
    )
    assert "story:" in out.getvalue() and "ticket 9" in out.getvalue()
    assert CANARY not in _everything(story)
    assert Erasure.objects.get(context=story, ref="@e1").erased_by == "command:dpo"
    with pytest.raises(CommandError, match="unknown_ref"):
        call_command("erase_context", "story", "--ref", "@e77", "--reason", "x")
    with pytest.raises(CommandError, match="REF:START:END"):
        call_command("erase_context", "story", "--span", "@e1:a:b", "--reason", "x")
