from django.apps import AppConfig


class ModelevalConfig(AppConfig):
    name = "modeleval"
