"""Soak: a long mixed load against one server while its resident memory is sampled
(RELIABILITY.md, "Soak").

    .venv/bin/python -m reliability.soak [--rounds 400] [--warmup 200] [--body-mb 3.5]

The load repeats what once grew the server's memory (reading a frame with a multi-megabyte body
revised four times) between ordinary traffic: appends, commits, evaluations, lists, search,
recall. Steady state is the median resident set of the STEADY_WINDOW rounds after a warm-up
of `--warmup` rounds (the resident set climbs for the first ~200 rounds, as the allocator's
arenas and the caches fill: a point before that plateau made any later growth look like
a leak, or hid one); the soak passes when the resident set at the end is within 2x of it.
The body (3.5 MB by default) stays under the 4,000,000-character limit of one transaction.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import time
from typing import Any

import httpx
import psutil

from reliability.stack import Stack, exit_on_sigterm

STEADY_WINDOW = 20  # rounds whose median resident set is the steady state


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children, in MB."""
    proc = psutil.Process(pid)
    total = proc.memory_info().rss
    for child in proc.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            total += child.memory_info().rss
    return round(total / 1e6, 1)


def prepare(base: str, token: str, slug: str, body_mb: float) -> None:
    http = httpx.Client(
        base_url=f"{base}/api/v1/contexts/{slug}/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    size = int(body_mb * 1_000_000)
    if size > 3_900_000:
        raise SystemExit(
            f"--body-mb {body_mb}: a transaction's text is limited to 4,000,000 characters; "
            "use at most 3.9"
        )
    for revision in range(4):
        text = chr(ord("a") + revision) * size
        op = "derive" if revision == 0 else "revise"
        http.post(
            "transactions/", json={"ops": [{"op": op, "id": "big", "body": {"t": text}}]}
        ).raise_for_status()
    http.post(
        "transactions/",
        json={"text": "(context-tx (derive small (a b)) (relate small supports big))"},
    ).raise_for_status()


def one_round(http: httpx.Client, i: int) -> list[int]:
    statuses = []
    statuses.append(http.get("frames/big/").status_code)
    statuses.append(
        http.post(
            "events/", json={"kind": "tool_result", "content": f"log line {i} " * 50}
        ).status_code
    )
    if i % 10 == 0:  # each evaluation stores the compiled view, the big body included
        statuses.append(http.post("evaluations/", json={}).status_code)
    statuses.append(
        http.post(
            "transactions/", json={"text": f"(context-tx (revise small (a r{i})))"}
        ).status_code
    )
    statuses.append(http.get("events/", params={"limit": 50}).status_code)
    statuses.append(http.get("transactions/", params={"limit": 20}).status_code)
    statuses.append(http.get("search/", params={"q": "log line"}).status_code)
    statuses.append(http.post("recall/", json={"frame_id": "small", "depth": 2}).status_code)
    return statuses


def soak(stack: Stack, token: str, slug: str, *, rounds: int, warmup: int) -> dict[str, Any]:
    assert stack.server is not None
    pid = stack.server.pid
    http = httpx.Client(
        base_url=f"{stack.base}/api/v1/contexts/{slug}/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=120,
    )
    start = rss_mb(pid)
    samples: list[float] = []
    bad: dict[int, int] = {}
    started = time.monotonic()
    for i in range(rounds):
        for status in one_round(http, i):
            if status >= 500:
                bad[status] = bad.get(status, 0) + 1
        samples.append(rss_mb(pid))
    end = rss_mb(pid)
    window = samples[min(warmup, len(samples) - 1) :][:STEADY_WINDOW]
    steady = statistics.median(window)
    return {
        "rounds": rounds,
        "requests": rounds * 7 + (rounds + 9) // 10,
        "seconds": round(time.monotonic() - started, 1),
        "rss_start_mb": start,
        "rss_steady_mb": steady,
        "rss_peak_mb": max(samples),
        "rss_end_mb": end,
        "end_over_steady": round(end / steady, 2),
        "steady_rounds": [min(warmup, rounds - 1) + 1, min(warmup, rounds - 1) + len(window)],
        "rss_every_50_rounds_mb": samples[49::50],
        "server_errors": bad,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=400)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--body-mb", type=float, default=3.5)
    args = parser.parse_args()
    exit_on_sigterm()
    with Stack() as stack:
        token = stack.create_context("soak", "--capacity-tokens", "100000000")
        prepare(stack.base, token, "soak", args.body_mb)
        result = soak(stack, token, "soak", rounds=args.rounds, warmup=args.warmup)
    result["body_mb"] = args.body_mb
    print(json.dumps(result, indent=2))
    return 0 if result["end_over_steady"] <= 2 and not result["server_errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
