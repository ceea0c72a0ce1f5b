"""rest_framework.authtoken's table held every token in plain text; knox's
tokens replace them, so the old ones (useless now) do not stay in backups."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_cache_table")]

    operations = [
        migrations.RunSQL(
            "DROP TABLE IF EXISTS authtoken_token", migrations.RunSQL.noop
        ),
    ]
