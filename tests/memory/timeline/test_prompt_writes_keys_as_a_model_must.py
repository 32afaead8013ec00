"""A frame's field in the prompt reads as a model must write it back (R23): a key that
needs quotes (a space, a bracket, a quote) is quoted by the rule of a value, so a line
copied into a `revise` revises that key, not a key cut at its first space."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context
from memory.models import Context, Frame
from memory.timeline.compile import compile_active_context
from memory.tx.engine import Author, submit_transaction

AGENT = Author("agent", "agent")
BODY = {"two words": "a b", "(paren": "x)", "plain": "v", "中文": "值"}


def test_keys_are_quoted_like_values_and_read_back(db: Any) -> None:
    ctx = create_context("quoted-keys")
    submit_transaction(
        ctx.pk, data={"reason": "n", "ops": [{"op": "derive", "id": "f", "body": BODY}]}
    )
    text = compile_active_context(Context.objects.get(pk=ctx.pk))["text"]
    lines = [line.strip() for line in text.splitlines() if line.startswith("  (")]
    assert lines == ['("two words" "a b")', '("(paren" "x)")', "(plain v)", "(中文 值)"]
    submit_transaction(ctx.pk, text=f"(context-tx (revise f {lines[0][:-6]} c)))", author=AGENT)
    assert Frame.objects.get(context=ctx, frame_id="f").body["two words"] == "c"


def test_an_empty_map_and_maps_in_a_list_read_back_as_they_were(db: Any) -> None:
    """Every printed line, sent back unchanged in a revise, leaves the body as it was."""
    ctx = create_context("shapes")
    body = {"empty map": {}, "list of maps": [{"k v": "1"}, {"x": "y z"}], "deep": {"a": {}}}
    submit_transaction(
        ctx.pk, data={"reason": "n", "ops": [{"op": "derive", "id": "p", "body": body}]}
    )
    text = compile_active_context(Context.objects.get(pk=ctx.pk))["text"]
    lines = [line.strip() for line in text.splitlines() if line.startswith("  (")]
    assert lines[:2] == ['("empty map" {})', '("list of maps" [{("k v" 1)} {(x "y z")}])']
    submit_transaction(ctx.pk, text=f"(context-tx (revise p {' '.join(lines)}))", author=AGENT)
    frame = Frame.objects.get(context=ctx, frame_id="p")
    assert (frame.revision, frame.body) == (2, body)
