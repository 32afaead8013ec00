"""The offline learner over REST, and retrieve_learnings reading what it learned."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memory.contexts import create_context, issue_token
from memory.models import Context, Event, Frame, Relation, TransactionRecord
from memory.search.indexer import drain


def learned_client(rest: Any, data_dir: Path, domain: str, limit: int | None = None) -> Any:
    from morphz_statebench.data import load_domain
    from morphz_statebench.learner import OfflineLearner, learn

    slug = f"sb-{domain.replace('_', '-')}"
    context = create_context(slug, capacity_tokens=2_000_000)
    client = rest(slug, issue_token(context).raw)
    dataset = load_domain(data_dir, domain, limit=limit)
    report = learn(client, dataset, OfflineLearner())
    drain()
    return client, report, dataset


def test_offline_learner_builds_cases_and_procedures(rest: Any, data_dir: Path) -> None:
    client, report, dataset = learned_client(rest, data_dir, "shopping_assistant", limit=20)
    # one event, one evaluation (one tick) and one transaction per trajectory
    assert (report.version, report.tick) == (20, 20)
    context = Context.objects.get(slug=client.slug)
    assert (context.version, context.tick) == (20, 20)
    events = Event.objects.filter(context=context, kind="external_fact").order_by("seq")
    assert [e.payload["statebench"]["task_id"] for e in events] == [
        t.task_id for t in dataset.trajectories
    ]
    assert not any(e.active for e in events)  # every transcript digested and retired
    assert TransactionRecord.objects.filter(context=context, status="committed").count() == 20
    frames = list(Frame.objects.filter(context=context))
    cases = [f for f in frames if f.body["kind"] == "case"]
    procedures = [f for f in frames if f.body["kind"] == "procedure"]
    assert len(cases) == 20 and procedures
    for case in cases:
        assert len(case.sources) == 1 and case.sources[0].startswith("@e")
    superseded = set(
        Relation.objects.filter(context=context, name="supersedes").values_list(
            "object__frame_id", flat=True
        )
    )
    assert superseded
    for case in cases:
        # a case a procedure generalised is superseded by it and retired at once (R17)
        assert (case.status == "retired") == (case.frame_id in superseded)
    for procedure in procedures:
        assert procedure.status == "active"
        assert set(procedure.sources) <= {c.frame_id for c in cases}
        members = {
            r.object.frame_id
            for r in Relation.objects.filter(context=context, name="supersedes", subject=procedure)
        }
        assert members == set(procedure.sources) and len(members) >= 2
    # a procedure that grew past two cases was revised (derive, then one revise per case)
    grown = [p for p in procedures if len(p.sources) > 2]
    assert grown and all(p.revision == len(p.sources) - 1 for p in grown)


def test_relearning_is_idempotent(rest: Any, data_dir: Path) -> None:
    from morphz_statebench.data import load_domain
    from morphz_statebench.learner import OfflineLearner, learn

    client, _, _ = learned_client(rest, data_dir, "travel", limit=8)
    again = learn(client, load_domain(data_dir, "travel", limit=8), OfflineLearner())
    assert (again.version, again.tick) == (8, 8)
    assert Event.objects.filter(context__slug=client.slug, kind="external_fact").count() == 8


def test_retrieve_learnings_returns_top_k_strings_and_writes_nothing(
    rest: Any, data_dir: Path
) -> None:
    from morphz_statebench.retrieval import Retriever

    client, _, _ = learned_client(rest, data_dir, "travel", limit=40)
    context = Context.objects.get(slug=client.slug)
    before = (
        context.version,
        context.tick,
        context.last_seq,
        TransactionRecord.objects.filter(context=context).count(),
    )
    retriever = Retriever(client)
    learnings = retriever.retrieve_learnings(
        "I need to change my flight to a later date, can you help?", top_k=3
    )
    assert len(learnings) == 3 and all(isinstance(text, str) and text for text in learnings)
    assert any("update_booking" in text for text in learnings)
    detailed = retriever.retrieve("I need to change my flight to a later date", 3)
    # three different workflows: never two members of one procedure
    assert len({retriever.group_of(item.frame_id) for item in detailed}) == 3
    assert len(retriever.retrieve_learnings("cancel my flight", top_k=5)) == 5
    context.refresh_from_db()
    after = (
        context.version,
        context.tick,
        context.last_seq,
        TransactionRecord.objects.filter(context=context).count(),
    )
    assert after == before


def test_llm_learner_gets_rejections_back_and_retries_within_bounds(
    rest: Any, data_dir: Path
) -> None:
    from morphz_statebench.data import load_domain
    from morphz_statebench.learner import LLMLearner, learn
    from morphz_statebench.models import ModelReply, ScriptedModel

    context = create_context("sb-llm", capacity_tokens=2_000_000)
    client = rest("sb-llm", issue_token(context).raw)
    dataset = load_domain(data_dir, "shopping_assistant", limit=3)

    def script(messages: list[dict[str, Any]], tools: Any) -> ModelReply:
        task = messages[0]["content"]
        ref = re.search(r"arrived as (@e\d+)", task).group(1)
        base = re.search(r"base version (\d+)", task).group(1)
        if "rejected" not in messages[-1]["content"]:  # first try cites a missing event
            return ModelReply(
                text=f"(context-tx (base-version {base}) (derive case-x (from @e999) (k v)))"
            )
        return ModelReply(
            text=f'Here it is:\n(context-tx (base-version {base}) (reason "case") '
            f'(derive case-{ref[2:]} (from {ref}) (request "asked") (tools a b)) (retire {ref}))',
            cost_usd=0.01,
        )

    model = ScriptedModel(script=script)
    report = learn(client, dataset, LLMLearner(model), retries=2)
    assert (report.version, report.tick) == (3, 3)
    assert report.retries == 3 and report.fallbacks == 0
    assert abs(report.cost_usd - 0.03) < 1e-9
    # every rejection went back to the model with the server's error code
    corrections = [m for m in model.calls if "rejected" in m[-1]["content"]]
    assert len(corrections) == 3 and all("unknown_ref" in m[-1]["content"] for m in corrections)
    ids = set(Frame.objects.filter(context=context).values_list("frame_id", flat=True))
    assert ids == {"case-1", "case-3", "case-5"}  # @e2, @e4: the committed transactions

    # a model that never gets it right: bounded retries, then a plain case is kept
    context = create_context("sb-llm-2", capacity_tokens=2_000_000)
    client = rest("sb-llm-2", issue_token(context).raw)
    stubborn = ScriptedModel(
        script=lambda m, t: ModelReply(text="(context-tx (derive bad (from @e999)))")
    )
    report = learn(
        client, load_domain(data_dir, "travel", limit=2), LLMLearner(stubborn), retries=1
    )
    assert (report.version, report.fallbacks, len(stubborn.calls)) == (2, 2, 4)
    assert set(Frame.objects.filter(context=context).values_list("frame_id", flat=True)) == {
        "case-001-fallback",
        "case-002-fallback",
    }
