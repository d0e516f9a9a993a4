from django.apps import AppConfig


class HumanBaselineConfig(AppConfig):
    """The top of the house: it may import every app and no app imports it. It connects the apps where one reads
    another's data without importing it, and its commands `demo` and `serve` run the whole platform."""

    name = "humanbaseline"
    verbose_name = "HumanBaseline"

    def ready(self):
        # Model evaluation reads human labels without importing annotation (modeleval.human_labels).
        from functools import partial

        from annotation import selectors
        from annotation.importers import FED_SOURCE
        from modeleval import human_labels

        human_labels.connect(accepted_final_labels=selectors.accepted_final_labels,
                             fed_ratings=partial(selectors.imported_ratings, source=FED_SOURCE),
                             has_fed_ratings=partial(selectors.has_imported_ratings, source=FED_SOURCE))
