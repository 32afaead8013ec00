"""The first worked example (docs/design.md), end to end (R9–R13, R6, R7)."""

from __future__ import annotations

from memory.kinds import TRANSACTION
from memory.models import Event, Relation, TransactionRecord


def test_first_example_commits_and_updates_memory(release_frame, first_example):
    agent = release_frame
    base = agent.version
    receipt = agent.commit(first_example.format(base=base))

    assert receipt["version"] == base + 1
    assert [r["op"] for r in receipt["results"]] == ["derive", "revise", "relate", "retire"]
    release = agent.frame("release")
    assert release.revision == 2
    assert list(release.body.items()) == [("goal", "ship-v1"), ("stage", "packaging")]
    test_result = agent.frame("test-result")
    assert test_result.sources == ["@e42"]
    assert test_result.body == {"tests": "passed"}
    assert Relation.objects.filter(
        subject=test_result, name="supports", object=release, removed_version__isnull=True
    ).exists()


def test_retired_observation_leaves_next_compiled_context(release_frame, first_example):
    agent = release_frame
    before = agent.evaluate()
    assert "@e42" in [o["ref"] for o in before["context"]["observations"]]

    agent.commit(first_example.format(base=agent.version))
    after = agent.evaluate(continuation=True)

    refs = [o["ref"] for o in after["context"]["observations"]]
    assert "@e42" not in refs
    assert "@e42" not in after["text"].split("## observations")[1]
    frames = {f["id"]: f for f in after["context"]["frames"]}
    assert frames["test-result"]["sources"] == ["@e42"]
    assert frames["release"]["revision"] == 2


def test_retired_observation_keeps_its_content_in_history(release_frame, first_example):
    agent = release_frame
    agent.commit(first_example.format(base=agent.version))
    log = Event.objects.get(context=agent.context, seq=42)
    assert log.active is False
    assert log.content.endswith("3000 passed")


def test_committed_text_is_stored_and_is_an_event(release_frame, first_example):
    agent = release_frame
    base = agent.version
    receipt = agent.commit(first_example.format(base=base))
    record = TransactionRecord.objects.get(
        context=agent.context, committed_version=receipt["version"]
    )
    assert record.text == first_example.format(base=base)
    assert record.base_version == base
    assert record.reason == "测试结果已吸收，继续准备发布"
    assert record.event is not None and record.event.kind == TRANSACTION
    assert record.event.content == record.text
    assert sorted(record.frame_ids) == ["release", "test-result"]


def test_receipt_reports_released_capacity(release_frame, first_example):
    agent = release_frame
    log_tokens = Event.objects.get(context=agent.context, seq=42).token_estimate
    used_before = agent.refresh().used_tokens
    receipt = agent.commit(first_example.format(base=agent.version))
    assert receipt["released_tokens"] == log_tokens
    assert receipt["pending_release"] == []
    assert receipt["pressure"]["used_tokens"] == agent.refresh().used_tokens
    assert agent.context.used_tokens < used_before


def test_json_form_commits_the_same_canonical_text(release_frame, first_example):
    from memory.tx.engine import submit_transaction
    from memory.tx.lang import parse_text

    agent = release_frame
    text = first_example.format(base=agent.version)
    receipt = submit_transaction(agent.context.pk, data=parse_text(text)).receipt
    record = TransactionRecord.objects.get(
        context=agent.context, committed_version=receipt["version"]
    )
    assert record.text == text
    assert agent.frame("release").revision == 2
