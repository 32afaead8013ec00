"""Joins the migrations three branches of this round added beside each other (search
embedding models, erasure and scopes, scratch contexts); none touches another's tables."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0019_search_embedding_model"),
        ("memory", "0020_erasure_scopes_screening"),
        ("memory", "0024_context_scratch"),
    ]
    operations: list[migrations.operations.base.Operation] = []
