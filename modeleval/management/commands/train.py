"""Train a classifier on a benchmark's accepted final labels (DiQAD's supervised baseline): start a
training run on the `gpu` queue (or train here with --sync), show its progress, then the trained
model's `classify` run on the test split."""
from django.core.management.base import CommandError

from benchmarks.models import Benchmark
from modeleval import actions, modes, runner, training
from modeleval.models import EvalRun, RunEventKind

from .score import Command as ScoreCommand
from .score import setting


class Command(ScoreCommand):
    help = "Train a classification head on a local model with the accepted final labels of a benchmark."

    def add_arguments(self, parser):
        parser.add_argument("--benchmark", required=True, help="benchmark slug (one task)")
        parser.add_argument("--question", default="", help="the question trained on; default the primary one")
        parser.add_argument("--base", default=actions.PACKAGED_NAME,
                            help=f"registered local model to put the head on (default {actions.PACKAGED_NAME})")
        parser.add_argument("--set", action="append", type=setting, default=[], dest="train_settings",
                            metavar="KEY=VALUE", help=f"a training setting ({', '.join(training.DEFAULTS)}), "
                                                      "e.g. --set epochs=3 --set test=10000")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--max-attempts", type=int, default=3)
        parser.add_argument("--sync", action="store_true", help="train in this process instead of on the workers")
        parser.add_argument("--no-wait", action="store_true", help="start the run and return")

    def handle(self, *, benchmark, question, base, train_settings, seed, max_attempts, sync, no_wait, **options):
        try:
            spec = actions.model_named(base)
            bench = Benchmark.objects.filter(slug=benchmark).first()
            if bench is None:
                raise CommandError(f"no benchmark {benchmark!r}")
            run = actions.start_training(model=spec, benchmark=bench, question_key=question,
                                         settings=dict(train_settings), seed=seed, max_attempts=max_attempts,
                                         enqueue=not sync)
        except actions.RunError as error:
            raise CommandError(f"{error} [{error.code}]") from None
        split = run.selection["split"]
        self.stdout.write(f"run {run.pk}: training {spec.name} on {len(split['train'])} items (validation "
                          f"{len(split['validation'])}, test {len(split['test'])}), {run.chunks_total} chunks")
        if no_wait:
            return
        def loss(current):
            step = current.events.filter(kind=RunEventKind.STEP).last()
            return f", loss {step.figures['loss']:.4f}" if step else ""

        run = self.follow(run, sync, unit="example", detail=loss)
        for event in run.events.filter(kind=RunEventKind.VALIDATION):
            self.stdout.write(f"  epoch {event.figures['epoch']}: validation accuracy {event.figures['accuracy']:.4f}")
        self.require_finished(run)
        scored = EvalRun.objects.filter(model__trained_by=run, mode=modes.training.SCORES_IN).first()
        self.stdout.write(f"model {scored.model.name} ({scored.model.sha256[:12]}); test split: run {scored.pk}")
        scored = runner.run_sync(scored) if sync else self.poll(scored, lambda r: None)
        self.report(scored)
        self.require_finished(scored)
