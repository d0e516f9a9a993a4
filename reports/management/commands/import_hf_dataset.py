from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import ImportFailure
from reports.hf_dataset import import_dataset


class Command(BaseCommand):
    help = ("Import a Hugging Face dataset written by export_hf_dataset (its folder, a zip of it, or its Parquet "
            "files): items, labels per annotator, gold and predictions, in one transaction (all or nothing).")

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="the dataset's folder, a zip of it, or its Parquet files")
        parser.add_argument("--benchmark", required=True, help="benchmark slug; created when new")

    def handle(self, paths, benchmark, **options):
        try:
            summary = import_dataset(list(paths), benchmark)
        except ImportFailure as failure:
            raise CommandError(f"{failure}\nNothing was imported.") from None
        self.stdout.write(self.style.SUCCESS(str(summary)))
