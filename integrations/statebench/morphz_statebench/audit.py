"""The audit of a run (`python -m morphz_statebench audit --results DIR`).

For every trajectory file under DIR written by a Morphz agent, through Morphz's REST API:
- the full agent's task ran in a fork of its domain's learned context, at the version the
  manifest froze (the fork's own record says so, not only the trajectory);
- at least one of the task's evaluations contained a learned frame (the server's record of
  that evaluation lists it among the frames the model was given), and the compiled text the
  agent recorded sending to the model is the server's text of that evaluation (sha256);
- the retrieve agent's retrievals named learned frames.
And for every domain seen: the learned context is still frozen, at its version, with the
same frames (digest) as when the manifest was written.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from morphz_client import MorphzClient, MorphzError

from morphz_statebench.learner import all_frames, digest
from morphz_statebench.manifest import LearnedContext, load_contexts


@dataclass
class AuditReport:
    trajectories: int = 0
    domains: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.trajectories > 0 and not self.problems

    def summary(self) -> str:
        head = "audit passed" if self.ok else "audit FAILED"
        lines = [f"{head}: {self.trajectories} trajectories, domains {', '.join(self.domains)}"]
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


def trajectory_files(results: Path) -> list[Path]:
    return sorted(
        p
        for p in results.rglob("*.json")
        if p.name not in ("metrics.json", "contexts.json") and p.parent != results.parent
    )


def check_learned(learned: LearnedContext) -> list[str]:
    problems = []
    with learned.client() as client:
        context = client.context()
        if not context.get("frozen"):
            problems.append(f"{learned.domain}: learned context {learned.slug} is not frozen")
        if int(context["version"]) != learned.manifest.version:
            problems.append(
                f"{learned.domain}: learned context moved from version "
                f"{learned.manifest.version} to {context['version']}"
            )
        if digest(all_frames(client)) != learned.manifest.frames_digest:
            problems.append(f"{learned.domain}: learned frames differ from the manifest")
    return problems


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def check_full(name: str, record: dict[str, Any], learned: LearnedContext) -> list[str]:
    problems = []
    fork = record.get("fork") or {}
    try:
        client = MorphzClient(learned.url, fork["token"], context=fork["slug"])
    except (KeyError, MorphzError) as exc:
        return [f"{name}: its fork cannot be read ({exc})"]
    with client:
        context: dict[str, Any] = dict(client.context())
        lineage = context.get("forked_from") or {}
        if (
            lineage.get("slug") != learned.slug
            or lineage.get("version") != learned.manifest.version
        ):
            problems.append(
                f"{name}: fork {fork['slug']} was not made from {learned.slug} at version "
                f"{learned.manifest.version} (its record: {lineage})"
            )
        learned_ids = set(learned.manifest.frames)
        proven = 0
        for item in record.get("evaluations") or []:
            try:
                evaluation = client.evaluation(item["id"])
            except AttributeError:
                evaluation = client._request("GET", client._ctx(f"evaluations/{item['id']}/"))
            except MorphzError as exc:
                problems.append(f"{name}: evaluation {item.get('id')} cannot be read ({exc})")
                continue
            text = str((evaluation.get("input") or {}).get("text") or "")
            if _sha(text) != item.get("text_sha256"):
                problems.append(
                    f"{name}: evaluation {item['id']}: the text sent to the model is not the "
                    "server's compiled text"
                )
                continue
            seen = {f.get("id") for f in evaluation.get("frames_seen") or []}
            if seen & learned_ids:
                proven += 1
        if not proven:
            problems.append(f"{name}: no evaluation contained a learned frame")
    return problems


def audit(results: Path, folder: Path | None = None) -> AuditReport:
    contexts = load_contexts(folder)
    report = AuditReport()
    domains: set[str] = set()
    for path in trajectory_files(results):
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if not isinstance(data, dict) or "conversation" not in data:
            continue
        record = data.get("morphz")
        name = f"{path.parent.name}/{path.name}"
        report.trajectories += 1
        if not isinstance(record, dict):
            report.problems.append(f"{name}: no Morphz record (not run by a Morphz agent)")
            continue
        domain = record.get("domain")
        learned = contexts.get(str(domain))
        if learned is None:
            report.problems.append(f"{name}: no learned context for domain {domain!r}")
            continue
        domains.add(learned.domain)
        if record.get("learned", {}).get("slug") != learned.slug:
            report.problems.append(f"{name}: used {record.get('learned')} not {learned.slug}")
        if record.get("agent") == "full":
            report.problems += check_full(name, record, learned)
        elif record.get("agent") == "retrieve":
            learned_ids = set(learned.manifest.frames)
            named = {f for r in record.get("retrievals") or [] for f in r.get("frames") or []}
            if not named & learned_ids:
                report.problems.append(f"{name}: no retrieval returned a learned frame")
    for domain in sorted(domains):
        report.problems += check_learned(contexts[domain])
    report.domains = sorted(domains)
    return report
