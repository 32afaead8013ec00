from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory.contexts import issue_token
from memory.management.data_command import DataCommand
from memory.models import Context


class Command(DataCommand):
    help = "Print a new API token for an existing context (the token alone on the last line)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument(
            "--name", default="agent", help="a name people will recognise in the history"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        context = Context.objects.filter(slug=options["slug"]).first()
        if context is None:
            raise CommandError(f"no context with slug {options['slug']!r}")
        issued = issue_token(context, name=options["name"])
        self.stdout.write(f"new API token for {context.slug} (shown once):")
        self.stdout.write(issued.raw)
