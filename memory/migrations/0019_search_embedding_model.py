"""Each search document records the embedder that wrote its vector (R61). Documents
embedded before were embedded by the bundled model: the column is added with that name
as its default (PostgreSQL stores it once, no table rewrite), then the default is dropped
back to empty (what a document has before it is embedded)."""

from django.db import migrations, models

BUNDLED = "wordllama:l2_supercat_256"  # memory.search.semantic.BUNDLED when this was written


class Migration(migrations.Migration):
    dependencies = [("memory", "0016_search_frame_time_index")]

    operations = [
        migrations.AddField(
            model_name="searchdocument",
            name="embedding_model",
            field=models.CharField(blank=True, default=BUNDLED, editable=False, max_length=300),
        ),
        migrations.AlterField(
            model_name="searchdocument",
            name="embedding_model",
            field=models.CharField(blank=True, default="", editable=False, max_length=300),
        ),
    ]
