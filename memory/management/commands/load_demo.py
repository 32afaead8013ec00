from __future__ import annotations

from typing import Any

from django.conf import settings

from memory.demo.player import DEMO_SLUG, load_demo
from memory.management.data_command import DataCommand
from morphz.config import data_dir


class Command(DataCommand):
    help = (
        "Load the demo context (the two worked examples of docs/design.md) and the demo login. "
        "Does nothing to an existing demo context; always prints how to log in."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        login = load_demo(data_dir())
        if login.created:
            self.stdout.write(
                f"loaded context {DEMO_SLUG!r} (the two worked examples of docs/design.md)"
            )
            self.stdout.write(f"API token for {DEMO_SLUG!r} (shown once): {login.token}")
        else:
            self.stdout.write(f"context {DEMO_SLUG!r} already exists; left as it is")
        self.stdout.write(
            f"log in at http://{settings.HOST}:{settings.PORT}/ as {login.username} / {login.password}"
        )
