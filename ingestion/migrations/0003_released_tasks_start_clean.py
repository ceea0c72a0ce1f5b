"""A task at attempt 0 never ran: its first claim clears nothing.

Releases before this migration left the released run's `stage_seconds` on the
queued task; reset every queued task at attempt 0 to how submit creates it.
"""

from django.db import migrations


def reset_queued_first_attempts(apps, schema_editor):
    IngestionTask = apps.get_model("ingestion", "IngestionTask")
    IngestionTask.objects.filter(status="queued", attempt=0).update(
        stage="download",
        completed=0,
        total=0,
        stage_seconds={},
        error_code=None,
        error_detail=None,
        finished_at=None,
    )


class Migration(migrations.Migration):
    dependencies = [("ingestion", "0002_worker_counter_stage_seconds")]

    operations = [
        migrations.RunPython(reset_queued_first_attempts, migrations.RunPython.noop)
    ]
