from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory.errors import MorphzError
from memory.management.data_command import DataCommand
from memory.models import Context
from memory.versions.forks import fork_context


class Command(DataCommand):
    help = (
        "Fork a context at a version (default: now) into a new context; prints the new "
        "token alone on the last line."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", help="slug of the context to fork")
        parser.add_argument("destination", nargs="?", default=None, help="slug of the fork")
        parser.add_argument("--at-version", type=int, default=None)
        parser.add_argument("--name", default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        source = Context.objects.filter(slug=options["source"]).first()
        if source is None:
            raise CommandError(f"no context {options['source']!r}")
        try:
            result = fork_context(
                source,
                slug=options["destination"],
                at_version=options["at_version"],
                name=options["name"],
                token_name="fork_context",
            )
        except MorphzError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"forked {source.slug} at version {result.version} (tick {result.tick}) into "
            f"{result.context.slug}; API token (shown once):"
        )
        self.stdout.write(result.token.raw)
