from django.apps import AppConfig


class ModelevalConfig(AppConfig):
    name = "modeleval"

    def ready(self):
        from . import tasks  # noqa: F401  registers score_chunk, which the actions queue by name
