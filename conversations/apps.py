from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    """Chat as conversations: turns kept for follow-ups, the chat API, feedback."""

    name = "conversations"
    verbose_name = "Conversations"
