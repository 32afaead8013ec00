"""Concurrent writers on one context over HTTP, and the invariants checked afterwards.

Each writer sends `per_writer` transactions, each under its own idempotency key: it derives
a frame of its own and revises one of a few shared frames against the version it last read
(so writers collide: 409 `conflict` is answered by re-reading and resubmitting). A failed
connection or a 503 is retried under the same key until acknowledged or the writer gives
up. Every acknowledged receipt is kept; `check_invariants` then proves, from PostgreSQL
alone, that nothing acknowledged was lost and nothing was half-written.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg

SHARED = 4  # shared frames the writers fight over


@dataclass
class Ack:
    key: str
    version: int
    transaction: int
    frame: str
    shared: str


@dataclass
class Tally:
    acks: list[Ack] = field(default_factory=list)
    conflicts: int = 0
    retries: int = 0
    gave_up: int = 0
    server_errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def seed(base: str, token: str, slug: str) -> None:
    """The shared frames every writer revises."""
    ops = [{"op": "derive", "id": f"shared-{i}", "body": {"n": "0"}} for i in range(SHARED)]
    response = httpx.post(
        f"{base}/api/v1/contexts/{slug}/transactions/",
        json={"ops": ops, "idempotency_key": "seed"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    response.raise_for_status()


def writer(
    base: str,
    token: str,
    slug: str,
    wid: int,
    per_writer: int,
    tally: Tally,
    *,
    stop: threading.Event | None = None,
    patience: float = 60.0,
) -> None:
    url = f"{base}/api/v1/contexts/{slug}/"
    rng = random.Random(wid)
    with httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=15) as http:
        version = 0
        for i in range(per_writer):
            if stop is not None and stop.is_set():
                return
            key = f"w{wid}-{i}"
            frame = f"w{wid}-t{i}"
            shared = f"shared-{rng.randrange(SHARED)}"
            deadline = time.monotonic() + patience
            while True:
                body = {
                    "base_version": version,
                    "reason": f"writer {wid} step {i}",
                    "ops": [
                        {"op": "derive", "id": frame, "body": {"writer": str(wid), "i": str(i)}},
                        {"op": "revise", "id": shared, "body": {"n": f"{wid}.{i}"}},
                    ],
                    "idempotency_key": key,
                }
                try:
                    response = http.post(url + "transactions/", json=body)
                except httpx.HTTPError:
                    response = None
                if response is not None and response.status_code in (200, 201):
                    receipt = response.json()
                    with tally.lock:
                        tally.acks.append(
                            Ack(key, receipt["version"], receipt["transaction"], frame, shared)
                        )
                    version = receipt["version"]
                    break
                if response is not None and response.status_code == 409:
                    code = response.json()["error"]["code"]
                    if code != "conflict":
                        raise AssertionError(f"{key}: unexpected 409 {code}")
                    with tally.lock:
                        tally.conflicts += 1
                    version = _current_version(http, url, version)
                    continue
                if response is not None and response.status_code >= 500:
                    error = _code(response)
                    if error != "database_unavailable":
                        with tally.lock:
                            tally.server_errors.append(f"{response.status_code} {error}")
                elif response is not None:
                    raise AssertionError(f"{key}: {response.status_code} {response.text[:300]}")
                with tally.lock:
                    tally.retries += 1
                if time.monotonic() > deadline or (stop is not None and stop.is_set()):
                    with tally.lock:
                        tally.gave_up += 1
                    return
                # The outcome is unknown (no answer, or the database was down): the retry
                # repeats the request exactly, so that if the first one committed, its key
                # replays it. A changed base version under the same key would be another
                # request (409 idempotency_key_reused); only a conflict moves it.
                time.sleep(0.05)


def _code(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["code"])
    except Exception:
        return response.text[:100]


def _current_version(http: httpx.Client, url: str, fallback: int) -> int:
    try:
        response = http.get(url)
        if response.status_code == 200:
            return int(response.json()["version"])
    except httpx.HTTPError:
        pass
    return fallback


def run_writers(
    base: str, token: str, slug: str, writers: int, per_writer: int, **kw: Any
) -> Tally:
    tally = Tally()
    threads = [
        threading.Thread(target=writer, args=(base, token, slug, w, per_writer, tally), kwargs=kw)
        for w in range(writers)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally


def check_invariants(conn: psycopg.Connection[Any], slug: str, tally: Tally) -> list[str]:
    """Every broken invariant, described; empty when the context is consistent."""
    problems: list[str] = []
    q = conn.execute
    row = q("SELECT id, version, last_seq FROM memory_context WHERE slug = %s", [slug]).fetchone()
    assert row is not None
    ctx, version, last_seq = row
    versions = [
        v
        for (v,) in q(
            "SELECT committed_version FROM memory_transactionrecord WHERE context_id = %s "
            "AND status = 'committed' ORDER BY committed_version",
            [ctx],
        )
    ]
    if versions != list(range(1, version + 1)):
        problems.append(f"committed versions are not 1..{version}: {len(versions)} rows")
    seqs = [
        s for (s,) in q("SELECT seq FROM memory_event WHERE context_id = %s ORDER BY seq", [ctx])
    ]
    if seqs != list(range(1, last_seq + 1)):
        problems.append(f"event seqs are not 1..{last_seq}")
    orphans = q(
        "SELECT count(*) FROM memory_transactionrecord t LEFT JOIN memory_event e ON e.id = t.event_id "
        "WHERE t.context_id = %s AND t.status = 'committed' AND (e.id IS NULL OR e.kind <> 'transaction')",
        [ctx],
    ).fetchone()
    if orphans and orphans[0]:
        problems.append(f"{orphans[0]} committed transactions without their event")
    gaps = q(
        "SELECT f.frame_id, f.revision, count(r.id), max(r.revision) FROM memory_frame f "
        "LEFT JOIN memory_framerevision r ON r.frame_id = f.id WHERE f.context_id = %s "
        "GROUP BY f.id HAVING count(r.id) <> f.revision OR max(r.revision) <> f.revision",
        [ctx],
    ).fetchall()
    for frame_id, revision, count, top in gaps:
        problems.append(f"frame {frame_id} revision {revision} has {count} revisions (top {top})")
    stale = q(
        "SELECT f.frame_id FROM memory_frame f JOIN memory_framerevision r ON r.frame_id = f.id "
        "AND r.revision = f.revision WHERE f.context_id = %s AND r.body::jsonb <> f.body::jsonb",
        [ctx],
    ).fetchall()
    for (frame_id,) in stale:
        problems.append(f"frame {frame_id}: body differs from its last revision")
    keys = dict(
        q(
            "SELECT idempotency_key, committed_version FROM memory_transactionrecord "
            "WHERE context_id = %s AND status = 'committed' AND idempotency_key IS NOT NULL",
            [ctx],
        ).fetchall()
    )
    by_key: dict[str, int] = {}
    for ack in tally.acks:
        if ack.key in by_key and by_key[ack.key] != ack.version:
            problems.append(f"{ack.key} acknowledged twice with different versions")
        by_key[ack.key] = ack.version
        if keys.get(ack.key) != ack.version:
            problems.append(f"acknowledged {ack.key} (version {ack.version}) is missing")
    revised = dict(
        q(
            "SELECT op->>'id', count(*) FROM memory_transactionrecord t, "
            "json_array_elements(t.ops::json) op WHERE t.context_id = %s "
            "AND t.status = 'committed' AND op->>'op' = 'revise' GROUP BY 1",
            [ctx],
        ).fetchall()
    )
    for name, revision in q(
        "SELECT frame_id, revision FROM memory_frame WHERE context_id = %s "
        "AND frame_id LIKE 'shared-%%'",
        [ctx],
    ).fetchall():
        if revision != 1 + revised.get(name, 0):
            problems.append(
                f"{name}: revision {revision}, but {revised.get(name, 0)} commits revised it"
            )
    return problems
