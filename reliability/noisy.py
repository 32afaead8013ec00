"""Noisy neighbour (RELIABILITY.md): `--readers` clients read a ~16 MB diff in a loop on
one token while another context's trivial GET is timed; its median latency against the
same GET with no noise, as a ratio (target: <= 3x).

    .venv/bin/python -m reliability.noisy [--readers 8] [--samples 60]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from typing import Any

import httpx

from reliability.clients import api, big_diff_context, latencies_ms, load, summary
from reliability.stack import Stack, exit_on_sigterm


def reader(base: str, token: str, stop: Any, answers: Any, megabytes: Any) -> None:
    http = httpx.Client(
        base_url=f"{base}/api/v1/contexts/noisy/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=300,
    )
    while not stop.is_set():
        try:
            size = len(http.get("diff/", params={"from": 0}).content)
        except httpx.HTTPError:
            continue
        with answers.get_lock():
            answers.value += 1
        with megabytes.get_lock():
            megabytes.value += size / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--samples", type=int, default=60)
    args = parser.parse_args()
    exit_on_sigterm()
    began = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with Stack() as stack:
        noisy_token = big_diff_context(stack, "noisy")
        quiet_token = stack.create_context("quiet")
        quiet_http = api(stack, quiet_token, "quiet")
        latencies_ms(quiet_http, "", 10)  # warm
        quiet = latencies_ms(quiet_http, "", args.samples, pause=0.2)
        # Readers in processes of their own: threads here would compete with the timed
        # client for this process's GIL and make the server look slower than it is.
        stop = multiprocessing.Event()
        answers = multiprocessing.Value("i", 0)
        megabytes = multiprocessing.Value("d", 0.0)
        readers = [
            multiprocessing.Process(
                target=reader, args=(stack.base, noisy_token, stop, answers, megabytes)
            )
            for _ in range(args.readers)
        ]
        for process in readers:
            process.start()
        time.sleep(3)  # the readers are at work
        noisy = latencies_ms(quiet_http, "", args.samples, pause=0.2)
        stop.set()
        for process in readers:
            process.join(300)
        reads = {"answers": answers.value, "bytes": megabytes.value * 1e6}
        q, n = summary(quiet), summary(noisy)
        result: dict[str, Any] = {
            "date": began,
            "load": load(),
            "readers": args.readers,
            "heavy_answers_read": reads["answers"],
            "heavy_mb_read": round(reads["bytes"] / 1e6, 1),
            "other_context_quiet": q,
            "other_context_under_noise": n,
            "p50_ratio": round(n["p50_ms"] / q["p50_ms"], 2) if "p50_ms" in n else None,
        }
    print(json.dumps(result, indent=2))
    return 0 if result["p50_ratio"] is not None and result["p50_ratio"] <= 3 else 1


if __name__ == "__main__":
    raise SystemExit(main())
