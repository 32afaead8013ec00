"""Slow clients: unread answers, slow headers, slow bodies (RELIABILITY.md).

    .venv/bin/python -m reliability.slow_clients [--unread 60] [--half-open 200]

1. Unread answers: `--unread` clients ask for a ~16 MB diff on one token and never read a
   byte (a 4 KB receive buffer). The send deadline is raised to 10 minutes for this part so
   every answer is still held when measured: the server's resident set once all answers
   are built and it is idle, against its idle resident set before (target: <= 1.5x).
2. Slow headers: `--half-open` connections send half a request line and stop; each must be
   closed by the server within MORPHZ_HEADER_TIMEOUT (10 s by default; seconds measured).
3. Slow bodies: `--half-open` requests declare a 1,000-byte body and send one byte; each
   must be closed within MORPHZ_BODY_TIMEOUT (30 s by default).
Meanwhile a client with a token must be served. Exits non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import socket
import time
from typing import Any

from reliability.clients import (
    api,
    big_diff_context,
    closed_by_server,
    idle_rss_mb,
    load,
    raw_socket,
    request_bytes,
    rss_mb,
)
from reliability.stack import Stack, exit_on_sigterm

HEADER_TIMEOUT = 10.0  # the defaults of MORPHZ_HEADER_TIMEOUT / MORPHZ_BODY_TIMEOUT
BODY_TIMEOUT = 30.0


def unread_answers(stack: Stack, token: str, count: int) -> dict[str, Any]:
    assert stack.server is not None
    pid = stack.server.pid
    http = api(stack, token, "slow")
    size = len(http.get("diff/", params={"from": 0}).content)  # warm: one answer read
    idle = idle_rss_mb(pid)
    socks = []
    peak = idle
    for _ in range(count):
        sock = raw_socket(stack, receive_buffer=4096)
        sock.sendall(request_bytes("/api/v1/contexts/slow/diff/?from=0", token))
        socks.append(sock)
    began = time.monotonic()
    # All answers are built when the server has been idle a while (they are produced one
    # at a time per token); sample the peak meanwhile.
    proc_idle_for = 0.0
    import psutil

    proc = psutil.Process(pid)
    proc.cpu_percent(None)
    while proc_idle_for < 6 and time.monotonic() - began < 1800:
        time.sleep(1)
        peak = max(peak, rss_mb(pid))
        proc_idle_for = proc_idle_for + 1 if proc.cpu_percent(None) < 5 else 0.0
    held = rss_mb(pid)
    still_open = sum(not closed_by_server(s) for s in socks)
    for sock in socks:
        sock.close()
    return {
        "answers": count,
        "answer_mb": round(size / 1e6, 1),
        "rss_idle_mb": idle,
        "rss_held_mb": held,
        "rss_peak_mb": peak,
        "held_over_idle": round(held / idle, 2),
        "peak_over_idle": round(peak / idle, 2),
        "connections_still_open": still_open,
        "seconds_to_build_all": round(time.monotonic() - began, 1),
    }


def closed_within(
    stack: Stack, count: int, payload: bytes, limit: float, served: Any
) -> dict[str, Any]:
    """Open `count` connections that send `payload` and stall; seconds until each closed."""
    socks: list[socket.socket] = []
    for _ in range(count):
        sock = raw_socket(stack)
        sock.sendall(payload)
        socks.append(sock)
    opened = time.monotonic()
    closed_at: dict[int, float] = {}
    ok = served()
    while len(closed_at) < count and time.monotonic() - opened < limit * 3:
        for n, sock in enumerate(socks):
            if n not in closed_at and closed_by_server(sock):
                closed_at[n] = time.monotonic() - opened
        time.sleep(0.2)
    for sock in socks:
        sock.close()
    seconds = sorted(closed_at.values())
    return {
        "connections": count,
        "closed": len(seconds),
        "first_closed_s": round(seconds[0], 1) if seconds else None,
        "last_closed_s": round(seconds[-1], 1) if seconds else None,
        "timeout_s": limit,
        "token_client_served_meanwhile": ok,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unread", type=int, default=60)
    parser.add_argument("--half-open", type=int, default=200)
    args = parser.parse_args()
    exit_on_sigterm()
    began = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    stack = Stack()
    stack.env["MORPHZ_SEND_TIMEOUT"] = "600"  # part 1 measures answers still held
    with stack:
        token = big_diff_context(stack, "slow")
        result: dict[str, Any] = {"date": began, "load_before": load()}
        result["unread_answers"] = unread_answers(stack, token, args.unread)
        stack.stop_server()
        stack.env.pop("MORPHZ_SEND_TIMEOUT")
        stack.start_server()
        http = api(stack, token, "slow")

        def served() -> bool:
            return http.get("").status_code == 200

        half = b"GET /api/v1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "
        result["slow_headers"] = closed_within(stack, args.half_open, half, HEADER_TIMEOUT, served)
        body = (
            b"POST /api/v1/contexts/slow/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {token}\r\n".encode()
            + b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
        )
        result["slow_bodies"] = closed_within(stack, args.half_open, body, BODY_TIMEOUT, served)
        result["load_after"] = load()
    print(json.dumps(result, indent=2))
    unread = result["unread_answers"]
    ok = unread["held_over_idle"] <= 1.5 and all(
        part["closed"] == part["connections"]
        and part["last_closed_s"] <= part["timeout_s"] + 2
        and part["token_client_served_meanwhile"]
        for part in (result["slow_headers"], result["slow_bodies"])
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
