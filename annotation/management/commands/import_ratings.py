from django.core.management.base import BaseCommand, CommandError

from annotation.importers import RATING_FORMATS, import_ratings
from benchmarks.importers import ImportFailure


class Command(BaseCommand):
    help = "Import ratings made outside the platform as annotations of anonymous external raters (all or nothing)."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--format", required=True, help=f"one of {', '.join(sorted(RATING_FORMATS))}")
        parser.add_argument("--benchmark", required=True, help="slug of the benchmark the items were imported into")

    def handle(self, path, format, benchmark, **options):
        try:
            summary = import_ratings(path, format, benchmark)
        except ImportFailure as failure:
            raise CommandError(f"{failure}\nNothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(str(summary)))
