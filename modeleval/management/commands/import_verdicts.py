"""Import a model's or judge's answers per item, made by another tool, as a finished run."""
import json

from django.core.management.base import BaseCommand, CommandError

from benchmarks.importers import ImportFailure
from modeleval.errors import RunError
from modeleval.outside_runs import FORMATS, import_outside_run


class Command(BaseCommand):
    help = ("Import a judge's verdicts or a model's answers made elsewhere as a finished run, so that the report's "
            "judge card and intervals read it: --format jsonl (one {\"item\": external id, \"answer\": ...} per "
            "line, on one --task), lm-eval (lm-evaluation-harness' samples_*.jsonl of --log_samples: per-option "
            "log-likelihoods) or inspect (an Inspect eval log). A malformed file writes nothing; the same file "
            "again adds nothing.")

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", metavar="path",
                            help="the file (lm-eval: one samples file per task, several allowed)")
        parser.add_argument("--format", default="jsonl", choices=FORMATS)
        parser.add_argument("--benchmark", required=True, metavar="SLUG")
        parser.add_argument("--task", metavar="SLUG", help="the task (jsonl: required; others: narrows the match)")
        parser.add_argument("--judge", "--model", dest="judge",
                            help="the judge's or model's name (inspect: the log's model unless given)")
        parser.add_argument("--judge-settings", default="{}", metavar="JSON",
                            help="its settings as a JSON object (prompt, temperature, tool, model_args, date...)")
        parser.add_argument("--scorer", help="inspect: the scorer whose answer is read (default: the log's first)")

    def handle(self, *, paths, format, benchmark, task, judge, judge_settings, scorer, **options):
        try:
            given = json.loads(judge_settings)
        except ValueError as error:
            raise CommandError(f"--judge-settings: a JSON object, got {judge_settings[:60]!r} ({error})") from None
        try:
            done = import_outside_run(format, paths, benchmark=benchmark, task=task, judge=judge, settings=given,
                                      scorer=scorer)
        except (RunError, ImportFailure) as error:
            raise CommandError(f"{error} [{error.code}]") from None
        tasks = ", ".join(t.slug for t in done.run.tasks.order_by("slug"))
        if done.created and format == "jsonl":
            self.stdout.write(self.style.SUCCESS(
                f"run {done.run.pk}: {done.n_verdicts} verdicts of judge {judge} (model {done.run.model.name}) on "
                f"task {task} of {benchmark}"))
        elif done.created:
            self.stdout.write(self.style.SUCCESS(
                f"run {done.run.pk}: {done.n_verdicts} answers of {done.run.model.name} on task(s) {tasks} of "
                f"{benchmark} ({format})"))
        else:
            self.stdout.write(f"run {done.run.pk} holds these answers already: nothing added")
