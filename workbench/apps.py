from django.apps import AppConfig


class WorkbenchConfig(AppConfig):
    """What developers and operators run over the whole system: the demo data
    (`seed_demo`) and the quality evaluations (`evaluate_retrieval`,
    `evaluate_answers`)."""

    name = "workbench"
    verbose_name = "Workbench"
