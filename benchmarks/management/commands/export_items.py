from django.core.management.base import BaseCommand, CommandError

from benchmarks.actions import export_items
from benchmarks.importers import EXPORT_FORMATS, ImportFailure


class Command(BaseCommand):
    help = "Export a benchmark's tasks and items to a file."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", default="jsonl", help=f"one of {', '.join(sorted(EXPORT_FORMATS))}")
        parser.add_argument("--benchmark", required=True)

    def handle(self, path, format, benchmark, **options):
        try:
            count = export_items(benchmark, format, path)
        except ImportFailure as failure:
            raise CommandError(str(failure)) from None
        self.stdout.write(self.style.SUCCESS(f"{count} items of {benchmark} written to {path}"))
