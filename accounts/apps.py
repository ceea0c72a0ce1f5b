from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and API tokens"

    def ready(self) -> None:
        from . import checks, receivers  # noqa: F401  (registers them)
