from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"

    def ready(self):
        from . import passwords, tokens  # noqa: F401 (connect the sign-in and password-change receivers)
