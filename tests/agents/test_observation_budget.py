"""Large observations never blow the window (R47): a 210 KB tool result compiles as a
head-and-tail preview within the per-item budget and is readable in full by chunks."""

from __future__ import annotations

import random
from typing import Any

import pytest

from memory.contexts import create_context
from memory.timeline.compile import bounded_content
from memory.timeline.evaluation import evaluate
from memory.timeline.events import append_event
from memory.tokens import estimate_tokens


def _big_log(chars: int = 210_000) -> str:
    rng = random.Random(7)
    lines = []
    size = 0
    n = 0
    while size < chars:
        line = f"{n:06d} step {rng.randrange(10**6):06d} ok"
        lines.append(line)
        size += len(line) + 1
        n += 1
    return ("\n".join(lines) + "\nSUMMARY: all steps ok")[-chars:]


@pytest.mark.django_db
def test_big_tool_result_compiles_within_budget() -> None:
    context = create_context("big", capacity_tokens=32_000)
    log = _big_log()
    assert len(log.encode()) == 210_000
    ref = append_event(context.pk, kind="tool_result", content=log).event.ref
    view = evaluate(context.pk)
    (item,) = view["context"]["observations"]
    budget = context.observation_budget_tokens
    assert item["tokens"] <= budget
    assert estimate_tokens(item["content"]) <= budget
    assert item["content"].startswith(log[:1000])
    assert item["content"].endswith("SUMMARY: all steps ok")
    assert f"read_event ref={ref} offset={item['preview']['read']['offset']}" in item["content"]
    assert item["preview"]["size"] == len(log)
    # The whole compiled input stays well inside the capacity (it used to be 240 %).
    assert view["tokens"] < 0.1 * context.capacity_tokens
    assert view["context"]["state"]["pressure"]["level"] == "ok"
    assert "preview of 210,000 chars" in view["text"]


@pytest.mark.django_db
def test_small_observation_enters_whole_and_budget_is_a_setting() -> None:
    context = create_context("small", observation_budget_tokens=300)
    append_event(context.pk, kind="tool_result", content="x" * 1000)
    append_event(context.pk, kind="tool_result", content="y" * 1500)
    first, second = evaluate(context.pk)["context"]["observations"]
    assert first["content"] == "x" * 1000 and "preview" not in first
    assert "preview" in second and estimate_tokens(second["content"]) <= 300


def test_wide_text_preview_counts_wide_characters() -> None:
    text = "测试通过" * 5000
    content, preview = bounded_content("@e9", text[:8008], text[-8000:], len(text), 500)
    assert preview is not None
    assert estimate_tokens(content) <= 500


def test_big_tool_result_is_readable_in_full_by_chunks(make_client: Any) -> None:
    mz = make_client("big-read")
    log = _big_log()
    ref = mz.append_event("tool_result", log)["ref"]
    view = mz.evaluate()
    read = view["context"]["observations"][0]["preview"]["read"]
    # Through the REST chunk reader, following next_offset from the preview's offset.
    parts = [view["context"]["observations"][0]["content"].split("\n…")[0]]
    offset = read["offset"]
    while offset is not None:
        chunk = mz.read_event(ref, offset=offset, length=read["length"])
        parts.append(chunk["content"])
        offset = chunk["next_offset"]
    assert "".join(parts) == log
    # Through the model's read_event tool: each chunk is an observation within the budget.
    budget = mz.context()["settings"]["observation_budget_tokens"]
    text, offset, calls = "", 0, 0
    while offset is not None and calls < 200:
        out = mz.take_apart(
            "",
            [
                {
                    "id": f"r{calls}",
                    "name": "read_event",
                    "arguments": {"ref": ref, "offset": offset},
                }
            ],
        )
        (entry,) = out["reads"]
        assert entry["status"] == "ok", entry
        text += entry["result"]["content"]
        offset = entry["result"]["next_offset"]
        calls += 1
    assert text == log
    observations = mz.evaluate()["context"]["observations"]
    chunks = [o for o in observations if o["kind"] == "recall_result"]
    assert len(chunks) == calls
    assert all("preview" not in o and o["tokens"] <= budget for o in chunks)
