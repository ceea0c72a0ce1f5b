"""Lanes: tasks carry `light` or `heavy`; active tasks of images (read by OCR)
are heavy, the others start light (their first run moves them if need be)."""

from django.conf import settings
from django.db import migrations, models


def images_are_heavy(apps, schema_editor):
    IngestionTask = apps.get_model("ingestion", "IngestionTask")
    IngestionTask.objects.filter(
        status__in=["queued", "running", "retry_wait"],
        document__content_type__startswith="image/",
    ).update(lane="heavy")


class Migration(migrations.Migration):

    dependencies = [
        ('documents', '0002_document_reviewed_by'),
        ('ingestion', '0005_task_work_budget'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='ingestiontask',
            name='lane',
            field=models.CharField(choices=[('light', 'Light'), ('heavy', 'Heavy')], default='light', max_length=10),
        ),
        migrations.AddIndex(
            model_name='ingestiontask',
            index=models.Index(condition=models.Q(('status__in', ['queued', 'retry_wait'])), fields=['lane', 'turn', 'available_at', 'created_at'], name='ingestion_lane_claim_order_idx'),
        ),
        migrations.RunPython(images_are_heavy, migrations.RunPython.noop),
    ]
