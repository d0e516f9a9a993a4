from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from benchmarks.permissions import GOLD_VISIBILITY_CHECKS

        from .selectors import may_see_gold

        if may_see_gold not in GOLD_VISIBILITY_CHECKS:
            GOLD_VISIBILITY_CHECKS.append(may_see_gold)
