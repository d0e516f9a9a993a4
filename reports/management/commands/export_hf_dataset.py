import os

from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import ImportFailure
from core.errors import ActionError
from reports.contract import ReportOptions
from reports.hf_dataset import export_dataset, push_to_hub


class Command(BaseCommand):
    help = ("Write a benchmark with its people's labels, the aggregate, the gold and the models' predictions as a "
            "Hugging Face dataset folder (Parquet files and a dataset card); --push uploads it to the Hub.")

    def add_arguments(self, parser):
        parser.add_argument("folder", help="the dataset folder to write (made when missing)")
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--gold-version", type=int, help="frozen gold version number (default: the report's gold)")
        parser.add_argument("--resamples", type=int, default=ReportOptions.n_resamples,
                            help="bootstrap resamples of the report whose agreement the card states")
        parser.add_argument("--push", metavar="REPO",
                            help="upload the folder to this dataset repository of the Hub (owner/name), with the "
                                 "token in the environment variable HF_TOKEN")

    def handle(self, folder, benchmark, gold_version, resamples, push, **options):
        token = os.environ.get("HF_TOKEN", "")
        if push and not token:
            raise CommandError("--push needs a Hub token in the environment variable HF_TOKEN; nothing was written")
        try:
            done = export_dataset(benchmark, folder, gold_version=gold_version,
                                  options=ReportOptions(n_resamples=resamples))
        except (ImportFailure, ActionError) as error:
            raise CommandError(str(error)) from None
        counts = ", ".join(f"{n} {config}" for config, n in done.counts.items())
        self.stdout.write(self.style.SUCCESS(f"{benchmark} written to {folder}: {counts}"))
        for part, (n, sha) in done.hashes.items():
            self.stdout.write(f"  {part}: {n} rows, sha256 {sha}")
        if push:
            commit = push_to_hub(folder, push, token)
            self.stdout.write(self.style.SUCCESS(f"pushed to https://huggingface.co/datasets/{push} ({commit})"))
