"""Learned contexts, frozen, and the manifest that says what each was built from.

The work directory (`MORPHZ_STATEBENCH_WORKDIR`, default `./morphz-statebench`) holds
`contexts.json`: per domain the context's slug, an API token for it, the Morphz URL and the
manifest: input file hashes, learner, version and tick at freezing, every frame's id,
revision and status, and a digest of the frames. The agents read it to fork or search the
learned context; the audit reads it to check nothing changed since freezing.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from morphz_client import MorphzClient

from morphz_statebench.data import Dataset
from morphz_statebench.learner import LearnReport, all_frames, digest

CONTEXTS_FILE = "contexts.json"


@dataclass
class Manifest:
    domain: str
    slug: str
    learner: str
    version: int
    tick: int
    frozen: bool
    inputs: dict[str, str]  # task id -> sha256 of the trajectory file, in learning order
    frames: dict[str, dict[str, Any]]  # frame id -> {revision, status, sources}
    frames_digest: str
    event_refs: dict[str, str]  # "@eN" -> task id
    learn_seconds: float = 0.0
    cost_usd: float = 0.0
    retries: int = 0
    fallbacks: int = 0
    created_at: float = field(default_factory=time.time)

    def matches(self, dataset: Dataset, learner: str) -> bool:
        return self.learner == learner and self.inputs == dataset.input_hashes


@dataclass
class LearnedContext:
    domain: str
    url: str
    slug: str
    token: str
    manifest: Manifest

    def client(self, **kwargs: Any) -> MorphzClient:
        return MorphzClient(self.url, self.token, context=self.slug, **kwargs)


def workdir() -> Path:
    return Path(os.environ.get("MORPHZ_STATEBENCH_WORKDIR", "morphz-statebench")).resolve()


def load_contexts(folder: Path | None = None) -> dict[str, LearnedContext]:
    path = (folder or workdir()) / CONTEXTS_FILE
    if not path.exists():
        return {}
    raw = json.loads(path.read_text())
    return {
        domain: LearnedContext(
            domain=domain,
            url=item["url"],
            slug=item["slug"],
            token=item["token"],
            manifest=Manifest(**item["manifest"]),
        )
        for domain, item in raw.items()
    }


def save_context(learned: LearnedContext, folder: Path | None = None) -> Path:
    folder = folder or workdir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / CONTEXTS_FILE
    raw = json.loads(path.read_text()) if path.exists() else {}
    raw[learned.domain] = {
        "url": learned.url,
        "slug": learned.slug,
        "token": learned.token,
        "manifest": asdict(learned.manifest),
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(raw, indent=1, sort_keys=True))
    os.chmod(tmp, 0o600)  # holds API tokens
    tmp.replace(path)
    return path


def freeze(client: MorphzClient) -> dict[str, Any]:
    """Freeze the context (R54): every later write is refused with 409 context_frozen."""
    return dict(client._request("PATCH", client._ctx(), json={"frozen": True}))


def fork(client: MorphzClient, at_version: int) -> dict[str, Any]:
    """Fork the context at `at_version` (R53): `{slug, token, forked_from, ...}`."""
    return dict(client._request("POST", client._ctx("forks/"), json={"at_version": at_version}))


def freeze_with_manifest(client: MorphzClient, dataset: Dataset, report: LearnReport) -> Manifest:
    context = freeze(client)
    frames = all_frames(client)
    return Manifest(
        domain=dataset.domain,
        slug=client.slug,
        learner=report.learner,
        version=int(context["version"]),
        tick=int(context["tick"]),
        frozen=bool(context.get("frozen")),
        inputs=dataset.input_hashes,
        frames={
            f["id"]: {
                "revision": f["revision"],
                "status": f["status"],
                "sources": list(f.get("sources") or []),
            }
            for f in frames
        },
        frames_digest=digest(frames),
        event_refs=dict(report.event_refs),
        learn_seconds=report.seconds,
        cost_usd=report.cost_usd,
        retries=report.retries,
        fallbacks=report.fallbacks,
    )
