"""What the misbehaving-client runs share: a stack with a large diff to ask for, raw
sockets, resident memory, and latency figures (RELIABILITY.md, "Clients that misbehave").

The diff is `diff/?from=0` of a context holding `frames` frames of `frame_mb` MB each:
about 16 MB of JSON at the defaults, under the 32 MB response cap.
"""

from __future__ import annotations

import os
import resource
import socket
import statistics
import time
from typing import Any

import httpx
import psutil

from reliability.stack import Stack


def raise_own_descriptor_limit() -> int:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def rss_mb(pid: int) -> float:
    return round(psutil.Process(pid).memory_info().rss / 1e6, 1)


def idle_rss_mb(pid: int, seconds: float = 3.0) -> float:
    """The resident set once the process has been idle (no CPU) for a moment."""
    proc = psutil.Process(pid)
    proc.cpu_percent(None)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        time.sleep(seconds)
        if proc.cpu_percent(None) < 5:
            break
    return rss_mb(pid)


def big_diff_context(stack: Stack, slug: str, frames: int = 5, frame_mb: float = 1.6) -> str:
    """A context whose `diff/?from=0` is about frames x frame_mb MB; returns its token."""
    token = stack.create_context(slug, "--capacity-tokens", "100000000")
    http = api(stack, token, slug)
    size = int(frame_mb * 1_000_000)
    for n in range(frames):
        text = chr(ord("a") + n) * size
        http.post(
            "transactions/", json={"ops": [{"op": "derive", "id": f"big-{n}", "body": {"t": text}}]}
        ).raise_for_status()
    return token


def api(stack: Stack, token: str, slug: str) -> httpx.Client:
    return httpx.Client(
        base_url=f"{stack.base}/api/v1/contexts/{slug}/",
        headers={"Authorization": f"Bearer {token}"},
        timeout=300,
    )


def request_bytes(path: str, token: str) -> bytes:
    return (
        f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
    ).encode()


def raw_socket(stack: Stack, receive_buffer: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.settimeout(30)
    sock.connect(("127.0.0.1", stack.port))
    return sock


def closed_by_server(sock: socket.socket) -> bool:
    """True when the server closed `sock` (EOF or reset), without blocking."""
    sock.setblocking(False)
    try:
        return sock.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def latencies_ms(http: httpx.Client, path: str, count: int, pause: float = 0.05) -> list[float]:
    """`count` sequential GETs of `path`; each one's latency in ms (failures as inf)."""
    out = []
    for _ in range(count):
        began = time.perf_counter()
        try:
            ok = http.get(path).status_code == 200
        except httpx.HTTPError:
            ok = False
        out.append((time.perf_counter() - began) * 1000 if ok else float("inf"))
        time.sleep(pause)
    return out


def summary(values: list[float]) -> dict[str, Any]:
    finite = sorted(v for v in values if v != float("inf"))
    if not finite:
        return {"count": len(values), "failed": len(values)}
    return {
        "count": len(values),
        "failed": len(values) - len(finite),
        "p50_ms": round(statistics.median(finite), 1),
        "p90_ms": round(finite[int(0.9 * (len(finite) - 1))], 1),
        "max_ms": round(finite[-1], 1),
    }


def load() -> str:
    one, five, _fifteen = os.getloadavg()
    return f"{one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"
