"""Fair claiming: tasks carry their submitter and a turn (`enqueue.next_turn`).

Tasks already active take their document's uploader as submitter (the nearest
record of who asked) and all share turn 0, so they keep today's oldest-first
order among themselves and go before anything queued after the migration.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def submitters_from_uploaders(apps, schema_editor):
    IngestionTask = apps.get_model("ingestion", "IngestionTask")
    Document = apps.get_model("documents", "Document")
    IngestionTask.objects.filter(status__in=["queued", "running", "retry_wait"]).update(
        submitted_by_id=Subquery(
            Document.objects.filter(pk=OuterRef("document_id")).values("created_by_id")[
                :1
            ]
        )
    )


class Migration(migrations.Migration):
    dependencies = [
        ("documents", "0001_initial"),
        ("ingestion", "0003_released_tasks_start_clean"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name="ingestiontask",
            name="ingestion_claimable_idx",
        ),
        migrations.AddField(
            model_name="ingestiontask",
            name="submitted_by",
            field=models.ForeignKey(
                blank=True,
                db_constraint=False,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.DO_NOTHING,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="ingestiontask",
            name="turn",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddIndex(
            model_name="ingestiontask",
            index=models.Index(
                condition=models.Q(("status__in", ["queued", "retry_wait"])),
                fields=["turn", "available_at", "created_at"],
                name="ingestion_claim_order_idx",
            ),
        ),
        migrations.AddIndex(
            model_name="ingestiontask",
            index=models.Index(
                condition=models.Q(("status__in", ["queued", "running", "retry_wait"])),
                fields=["submitted_by", "turn"],
                name="ingestion_active_turn_idx",
            ),
        ),
        migrations.RunPython(submitters_from_uploaders, migrations.RunPython.noop),
    ]
