"""Conversations and feedback moved to the conversations app with their tables
(conversations 0001): retrieval lets go of them in the migration state only, no
table is dropped."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('retrieval', '0007_conversation_turn_sources'),
        ('conversations', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='conversation',
                    name='owner',
                ),
                migrations.RemoveField(
                    model_name='conversationturn',
                    name='conversation',
                ),
                migrations.RemoveField(
                    model_name='conversationturnsource',
                    name='turn',
                ),
                migrations.DeleteModel(
                    name='AnswerFeedback',
                ),
                migrations.DeleteModel(
                    name='Conversation',
                ),
                migrations.DeleteModel(
                    name='ConversationTurn',
                ),
                migrations.DeleteModel(
                    name='ConversationTurnSource',
                ),
            ],
        ),
    ]
