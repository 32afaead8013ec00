"""Serving Morphz: bind the port, start the indexer beside the server (morphz/supervisor.py),
run uvicorn on morphz.asgi with our limits, and on SIGTERM or SIGINT stop the indexer and
release the embedded PostgreSQL. `manage.py serve` parses the options and calls `serve`."""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
from io import TextIOBase
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.management.base import CommandError

if TYPE_CHECKING:
    import uvicorn


def shared_channel_layer() -> bool:
    """True when live updates travel through a layer all worker processes share (redis)."""
    backend = settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", "")
    return not backend.endswith("InMemoryChannelLayer")


def default_workers() -> int:
    """Worker processes when --workers is not given: one per CPU with a shared channel
    layer, else 1 (live updates of an in-memory layer reach only its own process)."""
    if shared_channel_layer():
        return max(1, os.cpu_count() or 1)
    return 1


BACKLOG = 2048  # pending connections the kernel queues before the server accepts them

MANAGE_PY = Path(__file__).resolve().parents[1] / "manage.py"


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or CommandError saying why not."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    family = infos[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise CommandError(
                f"cannot listen on {host}:{port}: the address is already in use (is another "
                "server running?); stop it or choose another port with PORT=..."
            ) from None
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)  # worker processes serve the same socket
    return sock


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Stop a child with SIGINT and wait for it: up to 15 seconds, then kill it."""
    if process.poll() is None:
        # SIGINT, not SIGTERM: a Python process still starting up unwinds on SIGINT
        # (KeyboardInterrupt) and so releases its handle on the embedded PostgreSQL, where
        # SIGTERM's default action would kill it and leave its pid in pgserver's list.
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def clear_abandoned_scratch() -> None:
    """Remove scratch contexts an import or replay left when its process was killed (they
    are never listed meanwhile); a database problem here only warns: serving comes first."""
    from django.db import DatabaseError, connection

    from memory.versions.replay import purge_abandoned_scratch

    try:
        purge_abandoned_scratch()
    except DatabaseError as exc:
        sys.stderr.write(f"warning: could not look for abandoned scratch contexts: {exc}\n")
    finally:
        connection.close()


class Stopped(Exception):
    """SIGTERM or SIGINT arrived outside uvicorn's own handling (start-up, shutdown)."""


def raise_stopped(signum: int, frame: FrameType | None) -> None:
    """Signal handler: raises Stopped(signum) so start-up or shutdown unwinds cleanly."""
    raise Stopped(signum)


def workers_for(asked: int | None, err: TextIOBase) -> int:
    """The number of server processes; a warning when several would not share live
    updates (no channel layer between them)."""
    workers = default_workers() if asked is None else asked
    if workers < 1:
        raise CommandError("--workers must be at least 1")
    if workers > 1 and not shared_channel_layer():
        err.write(
            f"warning: {workers} workers without CHANNEL_LAYER_URL: live updates reach "
            "only websockets on the worker that served the change; set "
            "CHANNEL_LAYER_URL=redis://... for the explorer\n"
        )
    return workers


def serve(
    asked_workers: int | None, *, indexer: str, access_log: bool, out: TextIOBase, err: TextIOBase
) -> None:
    """Serve morphz.asgi with uvicorn until SIGTERM or SIGINT, then stop the indexer
    (`indexer` is process, thread or none) and release the embedded database."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from morphz.embedded_db import stop_database
    from morphz.http_protocol import raise_descriptor_limit
    from morphz.supervisor import WORKER_PARENT_ENV, IndexerSupervisor, indexer_command

    raise_descriptor_limit()

    workers = workers_for(asked_workers, err)
    in_process = indexer == "thread"
    # This process and the workers it spawns read the setting when morphz.asgi loads.
    os.environ["MORPHZ_INDEXER_IN_PROCESS"] = "1" if in_process else "0"
    settings.MORPHZ_INDEXER_IN_PROCESS = in_process
    # From here on SIGTERM/SIGINT unwind through `finally` (uvicorn handles them while
    # it runs, then re-raises them here): the indexer and the database are stopped.
    sock = bind(settings.HOST, settings.PORT)
    supervisor: IndexerSupervisor | None = None
    previous: dict[int, Any] = {}
    try:
        previous = {
            sig: signal.signal(sig, raise_stopped) for sig in (signal.SIGTERM, signal.SIGINT)
        }
        clear_abandoned_scratch()
        if indexer == "process":
            supervisor = IndexerSupervisor(
                indexer_command(MANAGE_PY), stop_child=stop_process
            ).start()
        config = _uvicorn_config(workers, access_log=access_log)
        out.write(
            f"Morphz serving at http://{settings.HOST}:{settings.PORT}/ "
            f"(admin: /admin/, API: /api/v1/; {workers} worker(s))\n"
        )
        out.flush()
        server = uvicorn.Server(config)
        if workers > 1:
            os.environ[WORKER_PARENT_ENV] = str(os.getpid())  # read by each worker
            Multiprocess(config, sockets=[sock]).run()
        else:
            server.run(sockets=[sock])
    except Stopped:
        pass
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, signal.SIG_IGN)  # a second signal must not cut the clean-up
        sock.close()
        if supervisor is not None:
            supervisor.stop()
        stop_database()
        for number, handler in previous.items():
            signal.signal(number, handler)
    out.write("Morphz stopped\n")


def _uvicorn_config(workers: int, *, access_log: bool) -> uvicorn.Config:
    """The uvicorn.Config serving morphz.asgi on HOST:PORT with our limits."""
    import uvicorn

    from morphz.http_protocol import HTTP_PROTOCOL, connection_limit

    return uvicorn.Config(
        "morphz.asgi:application",
        host=settings.HOST,
        port=settings.PORT,
        workers=workers,
        log_level="info",
        access_log=access_log,
        lifespan="on",  # morphz.asgi starts everything before the first connection
        proxy_headers=False,
        # uvicorn's own limits (docs/production.md); the header, body and send
        # deadlines are added by the protocol class.
        http=HTTP_PROTOCOL,
        timeout_keep_alive=settings.MORPHZ_KEEP_ALIVE_TIMEOUT,
        limit_concurrency=connection_limit(settings.MORPHZ_MAX_CONNECTIONS),
        backlog=BACKLOG,
    )
