"""The database cache's table, so that a fresh `migrate` is all a server needs.

`createcachetable` makes the table of every DatabaseCache in CACHES and skips
tables that exist; with Redis configured it does nothing.
"""

from django.core.management import call_command
from django.db import migrations


def create_cache_tables(apps, schema_editor):
    call_command(
        "createcachetable", database=schema_editor.connection.alias, verbosity=0
    )


class Migration(migrations.Migration):
    dependencies = [("accounts", "0001_api_token")]

    operations = [
        migrations.RunPython(create_cache_tables, migrations.RunPython.noop),
    ]
