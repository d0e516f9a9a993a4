"""Import BotChat's released dialogues (MuTualTest-convs.tsv) as finished self-chat runs, one per model."""
from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import ImportFailure
from modeleval import botchat_release
from modeleval.actions import RunError


class Command(BaseCommand):
    help = ("Import the dialogues BotChat's models generated (open-compass/BotChat MuTualTest-convs.tsv) as finished "
            "self-chat runs, one per model column, to pair (make_pairs) and judge like runs made here.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="the tab-separated file: index, [nround,] one JSON list of chats per model")
        parser.add_argument("--seeds-benchmark", required=True, metavar="SLUG",
                            help="the MuTual import (import_items --format mutual) holding the seeds' real dialogues")
        parser.add_argument("--models", nargs="+", metavar="COLUMN", help="these model columns only (default all)")
        parser.add_argument("--limit", type=int, help="the first N seeds only")

    def handle(self, *, path, seeds_benchmark, models, limit, **options):
        try:
            runs = botchat_release.import_released(path, seeds_benchmark=seeds_benchmark, models=models, limit=limit)
        except (RunError, ImportFailure) as error:
            raise CommandError(f"{error} [{error.code}]") from None
        for run in runs:
            looping = run.predictions.filter(answer="loop").count()
            self.stdout.write(self.style.SUCCESS(
                f"run {run.pk}: {run.settings['column']} as model {run.model.name}, {run.items_total} dialogues in "
                f"benchmark {run.benchmark.slug}, {looping} looping"))
