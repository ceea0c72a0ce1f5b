"""Work budgets: what a task's runs spent (CPU seconds, OCR pages), kept across
attempts; tasks already there start from nothing spent."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('ingestion', '0004_fair_turns_per_submitter'),
    ]

    operations = [
        migrations.AddField(
            model_name='ingestiontask',
            name='work_cpu_seconds',
            field=models.FloatField(default=0.0),
        ),
        migrations.AddField(
            model_name='ingestiontask',
            name='work_ocr_pages',
            field=models.PositiveIntegerField(default=0),
        ),
    ]
