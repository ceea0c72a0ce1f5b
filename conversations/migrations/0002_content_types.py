"""The moved models' content types follow them (app label `retrieval` to
`conversations`), so the permissions granted on them and the admin's history
stay attached: both point at the content type's row, which keeps its id."""

from django.db import migrations

MOVED = ("conversation", "conversationturn", "conversationturnsource", "answerfeedback")


def relabel(source, target):
    def run(apps, schema_editor):
        content_types = apps.get_model("contenttypes", "ContentType").objects.using(
            schema_editor.connection.alias
        )
        for model in MOVED:
            old = content_types.filter(app_label=source, model=model)
            if not old.exists():
                continue  # a fresh database: post_migrate makes the new one
            # Made by a post_migrate between this app's migrations (`migrate
            # conversations 0001`): nothing was granted on it yet.
            content_types.filter(app_label=target, model=model).delete()
            old.update(app_label=target)

    return run


class Migration(migrations.Migration):

    dependencies = [
        # Permissions in the state: a content type deleted here takes its own.
        ('auth', '0012_alter_user_first_name_max_length'),
        ('contenttypes', '0002_remove_content_type_name'),
        ('conversations', '0001_initial'),
        ('retrieval', '0008_conversations_moved_out'),
    ]

    operations = [
        migrations.RunPython(
            relabel("retrieval", "conversations"),
            relabel("conversations", "retrieval"),
        ),
    ]
