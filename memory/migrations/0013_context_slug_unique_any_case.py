"""Context slugs are unique whatever their case (`Demo` and `demo` cannot both exist).

A database that already holds such a pair stops here with the pairs named, rather than
with the index's bare duplicate-key error. A slug cannot be edited, so move one of each
pair to a new slug with the version before this one: `manage.py export_context SLUG FILE`,
`manage.py import_context FILE --slug NEW`, delete the old context in Django admin, then
migrate again."""

from typing import Any

import django.db.models.functions.text
from django.db import migrations, models


def refuse_case_duplicates(apps: Any, schema_editor: Any) -> None:
    Context = apps.get_model("memory", "Context")
    seen: dict[str, str] = {}
    pairs = []
    for slug in Context.objects.order_by("slug").values_list("slug", flat=True):
        if slug.lower() in seen:
            pairs.append(f"{seen[slug.lower()]!r} and {slug!r}")
        seen.setdefault(slug.lower(), slug)
    if pairs:
        raise RuntimeError(
            "context slugs that differ only in case: "
            + ", ".join(pairs)
            + "; move one of each pair to a new slug (manage.py export_context SLUG FILE, "
            "manage.py import_context FILE --slug NEW, delete the old one in Django admin), "
            "then migrate again"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0012_commit_function_without_lookups"),
    ]

    operations = [
        migrations.RunPython(refuse_case_duplicates, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="context",
            constraint=models.UniqueConstraint(
                django.db.models.functions.text.Lower("slug"),
                name="context_slug_unique_any_case",
                violation_error_message="A context with this slug already exists, whatever its case.",
            ),
        ),
    ]
