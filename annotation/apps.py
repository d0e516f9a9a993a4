from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate, pre_migrate


def _remove_sqlite_triggers(using, **kwargs):
    from . import label_counts
    label_counts.remove_sqlite_triggers(connections[using])


def _install_sqlite_triggers(using, **kwargs):
    from . import label_counts
    label_counts.install_sqlite_triggers(connections[using])


class AnnotationConfig(AppConfig):
    name = "annotation"

    def ready(self):
        from . import accounts  # noqa: F401 (connects the look-alike username guard)

        # SQLite's label-count triggers cannot live through a migration (annotation.label_counts): off before
        # `migrate` (and `flush`'s reload), back on after it.
        pre_migrate.connect(_remove_sqlite_triggers, sender=self, dispatch_uid="annotation-sqlite-counts-off")
        post_migrate.connect(_install_sqlite_triggers, sender=self, dispatch_uid="annotation-sqlite-counts-on")
