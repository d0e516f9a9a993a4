"""Import a judge's verdicts per item, made by another tool or API, as a finished run."""
import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import ImportFailure
from modeleval.errors import RunError
from modeleval.verdicts import import_verdicts


class Command(BaseCommand):
    help = ("Import a judge's verdicts (JSON lines: {\"item\": external id, \"answer\": ...}) on one task as a "
            "finished run, so that the report's judge card and intervals read it. A malformed file writes nothing; "
            "the same file again adds nothing.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="the JSON-lines file of verdicts")
        parser.add_argument("--benchmark", required=True, metavar="SLUG")
        parser.add_argument("--task", required=True, metavar="SLUG")
        parser.add_argument("--judge", required=True, help="the judge's name (e.g. the API model it called)")
        parser.add_argument("--judge-settings", default="{}", metavar="JSON",
                            help="the judge's settings as a JSON object (prompt, temperature, tool, date...)")

    def handle(self, *, path, benchmark, task, judge, judge_settings, **options):
        try:
            given = json.loads(judge_settings)
        except ValueError as error:
            raise CommandError(f"--judge-settings: a JSON object, got {judge_settings[:60]!r} ({error})") from None
        try:
            done = import_verdicts(path, benchmark=benchmark, task=task, judge=judge, settings=given)
        except (RunError, ImportFailure) as error:
            raise CommandError(f"{error} [{error.code}]") from None
        if done.created:
            self.stdout.write(self.style.SUCCESS(
                f"run {done.run.pk}: {done.n_verdicts} verdicts of judge {judge} (model {done.run.model.name}) on "
                f"task {task} of {benchmark}"))
        else:
            self.stdout.write(f"run {done.run.pk} holds these verdicts already: nothing added")
