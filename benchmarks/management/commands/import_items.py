from django.core.management.base import BaseCommand, CommandError

from benchmarks.actions import import_items
from benchmarks.importers import FORMATS, ImportFailure


class Command(BaseCommand):
    help = "Import dialogue items from a file into a benchmark (one transaction: all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", default=None,
                            help=f"one of {', '.join(sorted(FORMATS))}; detected from the file when left out")
        parser.add_argument("--benchmark", required=True, help="benchmark slug; created when new")
        parser.add_argument("--task", default=None,
                            help="the DialogBench task of a file of one task not named after it (formats "
                                 "dialogbench_released and dialogbench_paper), e.g. 'Emotion Detection'")

    def handle(self, path, format, benchmark, task=None, **options):
        try:
            summary = import_items(path, format, benchmark, task)
        except ImportFailure as failure:
            raise CommandError(f"{failure}\nNothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(str(summary)))
