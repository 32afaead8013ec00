"""The offline learner builds the three domains' contexts from the shared data: each ends at
version 100, tick 100, frozen, replaying to the same state, with procedures that superseded
and retired their cases; the manifest records what it was built from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Context, Frame, Relation

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("history_served")]


def test_offline_learner_builds_the_three_domains_frozen_at_version_100(
    rest: Any, data_dir: Path
) -> None:
    from django.core.management import call_command, get_commands
    from morphz_client import MorphzAPIError
    from morphz_statebench.data import DOMAINS, load_domain
    from morphz_statebench.learner import OfflineLearner, learn
    from morphz_statebench.manifest import freeze_with_manifest

    for domain in DOMAINS:
        slug = f"sb-{domain.replace('_', '-')}"
        client = rest(slug, issue_token(create_context(slug, capacity_tokens=2_000_000)).raw)
        dataset = load_domain(data_dir, domain)
        assert len(dataset.trajectories) == 100
        report = learn(client, dataset, OfflineLearner())
        manifest = freeze_with_manifest(client, dataset, report)
        context = Context.objects.get(slug=slug)
        assert (context.version, context.tick, context.frozen) == (100, 100, True)
        assert (manifest.version, manifest.tick, manifest.frozen) == (100, 100, True)
        assert manifest.inputs == {t.task_id: t.sha256 for t in dataset.trajectories}
        assert len(manifest.event_refs) == 100 and report.fallbacks == 0
        frames = {f.frame_id: f for f in Frame.objects.filter(context=context)}
        assert set(manifest.frames) == set(frames)
        procedures = [f for f in frames.values() if f.body["kind"] == "procedure"]
        assert len(procedures) >= 3
        for procedure in procedures:
            superseded = Relation.objects.filter(
                context=context, subject=procedure, name="supersedes", removed_version=None
            )
            assert {r.object.frame_id for r in superseded} == set(procedure.sources)
            assert all(frames[case].status == "retired" for case in procedure.sources)
        # frozen: writes are refused and nothing moves
        with pytest.raises(MorphzAPIError) as refused:
            client.append_event("external_fact", "late")
        assert refused.value.code == "context_frozen"
        if "verify_context" in get_commands():  # replay equals the stored state (R51)
            call_command("verify_context", slug)
