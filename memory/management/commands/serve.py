from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

HELP = """Serve Morphz (HTTP + websockets) with uvicorn on HOST:PORT (default 127.0.0.1:8000).

Workers: each worker is a process with its own Python interpreter, so N workers use up to N
cores for requests. Live updates reach a websocket only through a channel layer every worker
shares: with CHANNEL_LAYER_URL (redis) set, the default is one worker per core; without it
the in-memory layer lives inside one process, so the default is 1, and more workers serve
the API faster but the explorer's live updates then only reach browsers attached to the
worker that served the change (a warning says so).

Search indexing: every worker runs the in-process indexer thread unless
MORPHZ_INDEXER_IN_PROCESS=0; for throughput, turn it off and run `manage.py run_indexer` as
its own process (several indexers may run at once).

Access logging is off by default (it costs a log line per request); --access-log turns it on.
"""


def shared_channel_layer() -> bool:
    """True when live updates travel through a layer all worker processes share (redis)."""
    backend = settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", "")
    return not backend.endswith("InMemoryChannelLayer")


def default_workers() -> int:
    if shared_channel_layer():
        return max(1, os.cpu_count() or 1)
    return 1


class Command(BaseCommand):
    help = HELP

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        from argparse import RawDescriptionHelpFormatter

        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.formatter_class = RawDescriptionHelpFormatter
        return parser

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--workers",
            type=int,
            default=None,
            help="worker processes (default: 1, or one per core with CHANNEL_LAYER_URL)",
        )
        parser.add_argument(
            "--access-log", action="store_true", help="log every request (off by default)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        import uvicorn

        workers = options["workers"] or default_workers()
        if workers < 1:
            raise CommandError("--workers must be at least 1")
        if workers > 1 and not shared_channel_layer():
            self.stderr.write(
                f"warning: {workers} workers without CHANNEL_LAYER_URL: live updates reach "
                "only websockets on the worker that served the change; set "
                "CHANNEL_LAYER_URL=redis://... for the explorer"
            )
        self.stdout.write(
            f"Morphz serving at http://{settings.HOST}:{settings.PORT}/ "
            f"(admin: /admin/, API: /api/v1/; {workers} worker(s))"
        )
        uvicorn.run(
            "morphz.asgi:application",
            host=settings.HOST,
            port=settings.PORT,
            workers=workers,
            log_level="info",
            access_log=options["access_log"],
            lifespan="off",
            proxy_headers=False,
        )
