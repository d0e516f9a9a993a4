from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate, pre_migrate


def _remove_sqlite_triggers(using, **kwargs):
    from . import triggers
    triggers.remove_sqlite_triggers(connections[using])


def _install_sqlite_triggers(using, **kwargs):
    from . import triggers
    triggers.install_sqlite_triggers(connections[using])


class ReportsConfig(AppConfig):
    name = "reports"

    def ready(self):
        from django.core import checks

        from .limits import shared_cache_check

        checks.register(shared_cache_check, checks.Tags.caches)
        # SQLite's stale-marking triggers cannot live through a migration (reports.triggers): off before
        # `migrate` (and `flush`'s reload), back on after it.
        pre_migrate.connect(_remove_sqlite_triggers, sender=self, dispatch_uid="reports-sqlite-triggers-off")
        post_migrate.connect(_install_sqlite_triggers, sender=self, dispatch_uid="reports-sqlite-triggers-on")
