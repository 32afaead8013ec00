from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

HELP = """Serve Morphz (HTTP + websockets) with uvicorn on HOST:PORT (default 127.0.0.1:8000).

Workers: each worker is a process with its own Python interpreter, so N workers use up to N
cores for requests. Live updates reach a websocket only through a channel layer every worker
shares: with CHANNEL_LAYER_URL (redis) set, the default is one worker per core; without it
the in-memory layer lives inside one process, so the default is 1, and more workers serve
the API faster but the explorer's live updates then only reach browsers attached to the
worker that served the change (a warning says so).

Search indexing runs in its own process (`manage.py run_indexer`), started and stopped with
the server, so segmenting a huge event never holds up a request (--indexer thread puts it
back inside each worker; --indexer none leaves it to an indexer you run yourself). It is
restarted with a back-off when it dies and dies with the server (morphz/supervisor.py).
Connection limits and deadlines: docs/production.md. At start, scratch contexts a killed
import or replay left are removed.

The port is bound before "serving at" is printed; a port in use is a clear error and a
non-zero exit. SIGTERM and SIGINT stop the server, the indexer and (when this process was
the last user of the embedded PostgreSQL) the database, and exit 0.

Access logging is off by default (it costs a log line per request); --access-log turns it on.
"""


class Command(BaseCommand):
    """`manage.py serve`: the options, then `morphz.server.serve` does the work."""

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
        parser.add_argument(
            "--indexer",
            choices=["process", "thread", "none"],
            default="process",
            help="search indexer: its own process started with the server (default), a "
            "thread in each worker, or none (run `manage.py run_indexer` yourself)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from django.core.management.base import CommandError

        from morphz.database_hint import database_problem
        from morphz.server import serve

        # A database without Morphz's tables would answer 500 to every request; one that
        # is down is waited for (503 until it is back).
        problem = database_problem(unreachable_ok=True)
        if problem is not None:
            raise CommandError(problem)

        serve(
            options["workers"],
            indexer=options["indexer"],
            access_log=options["access_log"],
            out=self.stdout,
            err=self.stderr,
        )
