"""Noisy neighbour (RELIABILITY.md): `--readers` clients read a ~16 MB diff in a loop on
one token while another context's trivial GET is timed; its median latency against the
same GET with no noise, as a ratio (target: <= 3x).

    .venv/bin/python -m reliability.noisy [--readers 8] [--samples 60]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from typing import Any

import httpx

from reliability.clients import api, big_diff_context, latencies_ms, load, summary
from reliability.stack import Stack, exit_on_sigterm


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
        stop = threading.Event()
        reads = {"answers": 0, "bytes": 0}

        def reader() -> None:
            http = api(stack, noisy_token, "noisy")
            while not stop.is_set():
                try:
                    answer = http.get("diff/", params={"from": 0})
                    reads["answers"] += 1
                    reads["bytes"] += len(answer.content)
                except httpx.HTTPError:
                    pass

        threads = [threading.Thread(target=reader) for _ in range(args.readers)]
        for thread in threads:
            thread.start()
        time.sleep(3)  # the readers are at work
        noisy = latencies_ms(quiet_http, "", args.samples, pause=0.2)
        stop.set()
        for thread in threads:
            thread.join()
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
