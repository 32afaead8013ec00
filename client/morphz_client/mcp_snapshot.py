"""A context's frames and live relations as of its current version, kept up to date by
`diff/` (R52), for the reference tools (`morphz_client.mcp_reference`).

How it works: docs/internals.md, section `client/morphz_client/mcp_snapshot.py`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from morphz_client.client import MorphzClient

__all__ = ["Snapshot", "snapshot_of"]

# Past this many versions behind, the copy is read again rather than patched.
DIFF_MAX_VERSIONS = 2_000
_PAGE = 200

Key = tuple[str, str, str]  # subject, relation name, object


@dataclass
class Snapshot:
    """Frames by id (`status`, `body`) and live relations, as of `version`."""

    version: int = -1
    frames: dict[str, dict[str, Any]] = field(default_factory=dict)
    relations: set[Key] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def refresh(self, mz: MorphzClient, pages: Callable[..., Iterator[dict[str, Any]]]) -> int:
        """Bring the copy to the context's current version; returns that version. Call with
        `lock` held."""
        version = mz.context()["version"]
        if version == self.version:
            return version
        if self.version < 0 or version - self.version > DIFF_MAX_VERSIONS or version < self.version:
            self._load(mz, version, pages)
        else:
            self._apply(mz.diff(self.version, version))
        self.version = version
        return version

    def _load(self, mz: MorphzClient, version: int, pages: Callable[..., Any]) -> None:
        self.frames = {
            f["id"]: {"status": f["status"], "body": f.get("body")}
            for f in pages(lambda c, n: mz.frames(cursor=c, limit=n, as_of=version))
        }
        self.relations = {
            (r["subject"], r["name"], r["object"])
            for r in pages(lambda c, n: mz.relations(cursor=c, limit=n, as_of=version), "relations")
        }

    def _apply(self, diff: Any) -> None:
        frames = diff["frames"]
        for f in frames["derived"]:
            self.frames[f["id"]] = {"status": f["status"], "body": f["body"]}
        for f in frames["revised"]:
            self.frames.setdefault(f["id"], {"status": "active"})["body"] = f["after"]
        for change in ("retiring", "retired", "restored"):
            for f in frames[change]:
                self.frames.setdefault(f["id"], {"body": None})["status"] = f["after"]
        for r in diff["relations"]["removed"]:
            self.relations.discard((r["subject"], r["name"], r["object"]))
        for r in diff["relations"]["added"]:
            self.relations.add((r["subject"], r["name"], r["object"]))


_SNAPSHOTS: dict[str, Snapshot] = {}
_GUARD = threading.Lock()


def snapshot_of(mz: MorphzClient) -> Snapshot:
    """This process's copy for `mz`'s token (created empty; `refresh` fills it)."""
    with _GUARD:
        return _SNAPSHOTS.setdefault(mz.token, Snapshot())
