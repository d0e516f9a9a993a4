from django.apps import AppConfig


class HumanBaselineConfig(AppConfig):
    """The top of the house: it may import every app and no app imports it. It connects the apps where one reads
    another's data without importing it (core.slots), and its commands `demo` and `serve` run the whole platform."""

    name = "humanbaseline"
    verbose_name = "HumanBaseline"

    def ready(self):
        from functools import partial
        from types import SimpleNamespace

        from annotation import judges, policy, selectors
        from annotation.importers import FED_SOURCE, import_ratings
        from benchmarks import actions as benchmark_actions
        from benchmarks import permissions
        from modeleval import human_labels
        from modeleval.selectors import item_uncertainty, uncertainty_runs
        from modeleval.verdicts import import_carried_predictions

        # Model evaluation trains on accepted labels and takes FED raters' ratings as few-shot examples.
        human_labels.source.fill(SimpleNamespace(
            accepted_final_labels=selectors.accepted_final_labels,
            fed_ratings=partial(selectors.imported_ratings, source=FED_SOURCE),
            has_fed_ratings=partial(selectors.has_imported_ratings, source=FED_SOURCE)))
        # Campaign members read the benchmarks, tasks, items and source gold their roles give them.
        permissions.member_scope.fill(policy.member_scope)
        # Active selection draws items by a judge run's uncertainty without annotation importing modeleval.
        judges.source.fill(item_uncertainty)
        judges.runs.fill(uncertainty_runs)
        # An item file that carries people's labels (JUDGE-BENCH) brings them in within the same import.
        benchmark_actions.carried_labels.fill(import_ratings)
        # ... and one that carries models' predictions (a Label Studio export) brings them in as imported runs.
        benchmark_actions.carried_predictions.fill(import_carried_predictions)
