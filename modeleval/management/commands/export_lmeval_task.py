"""Export a benchmark's multiple-choice tasks as lm-evaluation-harness tasks prompted as our runs prompt them."""
from django.core.management.base import BaseCommand, CommandError

from modeleval.errors import RunError
from modeleval.lmeval import export_folder
from modeleval.management.commands.score import setting


class Command(BaseCommand):
    help = ("Write a folder of lm-evaluation-harness 0.4.x tasks (a YAML and a JSON-lines file per task, a group "
            "over them, a README with the lm_eval command) whose prompts and options are those a log-likelihood "
            "run with --settings asks, so that lm-eval scores the same requests; its samples come back with "
            "import_verdicts --format lm-eval.")

    def add_arguments(self, parser):
        parser.add_argument("out", help="the folder to write (created if missing)")
        parser.add_argument("--benchmark", required=True, metavar="SLUG")
        parser.add_argument("--task", action="append", dest="tasks", metavar="SLUG",
                            help="a task to export (repeat; default: every multiple-choice task)")
        parser.add_argument("--set", action="append", type=setting, default=[], dest="mode_settings",
                            metavar="KEY=VALUE", help="a log-likelihood run's setting, as score --set takes it "
                                                      "(e.g. preset=dialogbench); repeat")

    def handle(self, *, out, benchmark, tasks, mode_settings, **options):
        given = dict(mode_settings)
        try:
            exported = export_folder(benchmark, out, tasks=tasks, settings=given)
        except RunError as error:
            raise CommandError(f"{error} [{error.code}]") from None
        extra = f",{exported.model_args}" if exported.model_args else ""
        self.stdout.write(self.style.SUCCESS(
            f"{exported.n_items} items in {len(exported.files) - 2} tasks written to {out}; run from there: "
            f"lm_eval --model hf --model_args pretrained=MODEL{extra} --include_path . --tasks {exported.group} "
            "--log_samples --output_path out"))
