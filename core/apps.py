from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app shares: the one error type (`core.errors`), its HTTP answer (`core.api`) and the
    platform-wide commands `demo` and `serve`."""

    name = "core"
