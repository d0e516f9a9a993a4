from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from benchmarks.permissions import MEMBER_SCOPES

        from . import accounts  # noqa: F401 (connects the look-alike username guard)
        from .policy import member_scope

        if member_scope not in MEMBER_SCOPES:
            MEMBER_SCOPES.append(member_scope)
