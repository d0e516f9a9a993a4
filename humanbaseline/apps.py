from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app shares: the one error type (`core.errors`), its HTTP answer (`core.api`) and the
    platform-wide commands `demo` and `serve`."""

    name = "core"

    def ready(self):
        # Model evaluation reads human labels without importing annotation (modeleval.human_labels).
        from functools import partial

        from annotation import selectors
        from annotation.importers import FED_SOURCE
        from modeleval import human_labels

        human_labels.connect(accepted_final_labels=selectors.accepted_final_labels,
                             fed_ratings=partial(selectors.imported_ratings, source=FED_SOURCE),
                             has_fed_ratings=partial(selectors.has_imported_ratings, source=FED_SOURCE))
