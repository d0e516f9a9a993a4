from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from . import accounts  # noqa: F401 (connects the look-alike username guard)
