"""Heavy reads (diff, lists, large frames) run at most MORPHZ_HEAVY_READS_PER_TOKEN at once
per caller; the others wait on the event loop, so one token's heavy reads cannot take every
worker thread from other contexts (issue 35: 8 diff readers on one token took another
context's trivial GET from 8 ms to 2.55 s)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from morphz.serving import HeavyReadsPerToken


def scope(path: str, token: str, method: str = "GET") -> dict[str, Any]:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "headers": [(b"authorization", f"Bearer {token}".encode())],
        "client": ("127.0.0.1", 1),
    }


async def peak_concurrency(requests: list[dict[str, Any]]) -> dict[str, int]:
    running: dict[str, int] = {}
    peak: dict[str, int] = {}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        token = scope["headers"][0][1].decode()
        running[token] = running.get(token, 0) + 1
        peak[token] = max(peak.get(token, 0), running[token])
        await asyncio.sleep(0.02)
        running[token] -= 1

    gate = HeavyReadsPerToken(app)
    await asyncio.gather(*(gate(s, None, None) for s in requests))
    await asyncio.sleep(0.1)  # the last turns' rests
    assert gate.gates == {}  # nothing kept once every caller is done
    return peak


@pytest.mark.parametrize("path", ["diff/", "events/", "frames/", "frames/big/", "evaluations/3/"])
def test_one_tokens_heavy_reads_run_one_at_a_time(settings: Any, path: str) -> None:
    settings.MORPHZ_HEAVY_READS_PER_TOKEN = 1
    requests = [scope(f"/api/v1/contexts/a/{path}", "noisy") for _ in range(6)]
    requests += [scope(f"/api/v1/contexts/b/{path}", "quiet") for _ in range(2)]
    peak = asyncio.run(peak_concurrency(requests))
    assert peak == {"Bearer noisy": 1, "Bearer quiet": 1}


def test_light_requests_and_writes_are_not_queued(settings: Any) -> None:
    settings.MORPHZ_HEAVY_READS_PER_TOKEN = 1
    requests = [scope("/api/v1/contexts/a/", "noisy") for _ in range(4)]
    requests += [scope("/api/v1/contexts/a/events/", "noisy", "POST") for _ in range(4)]
    requests += [scope("/api/v1/contexts/a/search/", "noisy") for _ in range(4)]
    peak = asyncio.run(peak_concurrency(requests))
    assert peak == {"Bearer noisy": 12}


def test_an_answer_being_sent_holds_no_turn(settings: Any) -> None:
    """A client that does not read its answer must not hold its token's next heavy read."""
    settings.MORPHZ_HEAVY_READS_PER_TOKEN = 1
    built: list[int] = []
    never_read = asyncio.Event()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        built.append(1)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"x"})

    async def stuck_send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            await never_read.wait()  # the client reads nothing

    async def run() -> None:
        gate = HeavyReadsPerToken(app)
        first = asyncio.create_task(gate(scope("/api/v1/contexts/a/diff/", "t"), None, stuck_send))
        second = asyncio.create_task(gate(scope("/api/v1/contexts/a/diff/", "t"), None, stuck_send))
        await asyncio.sleep(0.05)
        assert len(built) == 2  # the second was built while the first was still being sent
        never_read.set()
        await asyncio.gather(first, second)

    asyncio.run(run())


def test_a_sequential_callers_next_heavy_read_waits_out_the_rest(settings: Any) -> None:
    settings.MORPHZ_HEAVY_READS_PER_TOKEN = 1
    settings.MORPHZ_HEAVY_READS_REST = 1.0
    starts: list[float] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        starts.append(asyncio.get_running_loop().time())
        await asyncio.sleep(0.2)
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def send(message: dict[str, Any]) -> None:
        pass

    async def run() -> None:
        gate = HeavyReadsPerToken(app)
        for _ in range(2):  # one after the other, never two at once
            await gate(scope("/api/v1/contexts/a/diff/", "t"), None, send)

    asyncio.run(run())
    assert starts[1] - starts[0] >= 0.39


def test_a_callers_next_heavy_read_waits_out_the_rest(settings: Any) -> None:
    """After a heavy read that took t, the caller's next one starts no sooner than t * rest
    later (one caller's heavy reads take at most half a worker's time at rest 1)."""
    settings.MORPHZ_HEAVY_READS_PER_TOKEN = 1
    settings.MORPHZ_HEAVY_READS_REST = 1.0
    starts: list[float] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        starts.append(asyncio.get_running_loop().time())
        await asyncio.sleep(0.2)  # building the answer
        await send({"type": "http.response.start", "status": 200, "headers": []})

    async def send(message: dict[str, Any]) -> None:
        pass

    async def run() -> None:
        gate = HeavyReadsPerToken(app)
        await asyncio.gather(
            *(gate(scope("/api/v1/contexts/a/diff/", "t"), None, send) for _ in range(2))
        )

    asyncio.run(run())
    assert starts[1] - starts[0] >= 0.39
