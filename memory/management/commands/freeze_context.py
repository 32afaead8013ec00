from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from memory.contexts import set_frozen
from memory.management.data_command import DataCommand
from memory.models import Context


class Command(DataCommand):
    help = "Freeze a context (every write refused with context_frozen), or --unfreeze it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--unfreeze", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        context = Context.objects.filter(slug=options["slug"]).first()
        if context is None:
            raise CommandError(f"no context {options['slug']!r}")
        was_frozen = context.frozen
        context = set_frozen(context.pk, not options["unfreeze"])
        # Say what changed, so a second run is told apart from the first.
        if context.frozen == was_frozen:
            state = "was already frozen" if context.frozen else "was not frozen"
        else:
            state = "frozen" if context.frozen else "unfrozen"
        self.stdout.write(f"{context.slug} {state}")
