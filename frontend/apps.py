from django.apps import AppConfig


class FrontendConfig(AppConfig):
    name = "frontend"

    def ready(self):
        from . import tokens  # noqa: F401 (connects the password-change receiver)
