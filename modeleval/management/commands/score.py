"""Score a benchmark with a model: start a run on the `gpu` queue (or score it here with --sync)
and draw its progress from the run's counters until it ends."""
import json
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from benchmarks.models import Benchmark
from modeleval import actions, runner, selectors
from modeleval.models import EvalRun, Mode, PositionPolicy


def setting(text):
    """key=value, the value read as JSON when it parses (numbers, true, objects), else as text."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(f"expected key=value, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


class Command(BaseCommand):
    help = "Score a benchmark's items with a registered model and show progress."

    def add_arguments(self, parser):
        parser.add_argument("--model", required=True,
                            help=f"registered model name ({actions.PACKAGED_NAME} is registered on first use)")
        parser.add_argument("--benchmark", required=True, help="benchmark slug")
        parser.add_argument("--task", action="append", dest="tasks", help="task slug (repeatable); default all")
        parser.add_argument("--mode", default=Mode.LOGLIKELIHOOD, choices=Mode.values)
        parser.add_argument("--limit", type=int, help="at most N items per task")
        parser.add_argument("--position-policy", choices=PositionPolicy.values,
                            help="default: the study preset's (DialogBench's Qwen and Baichuan evaluators: "
                                 "gold_at_each_position), else as_is")
        parser.add_argument("--set", action="append", type=setting, default=[], dest="mode_settings",
                            metavar="KEY=VALUE",
                            help="a mode setting, e.g. --set continuation=letter --set batch_size=4")
        parser.add_argument("--template", help="file holding a custom prompt template (str.format)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--chunk-size", type=int, default=16)
        parser.add_argument("--max-attempts", type=int, default=3)
        parser.add_argument("--sync", action="store_true", help="score in this process instead of on the workers")
        parser.add_argument("--no-wait", action="store_true", help="start the run and return")

    def handle(self, *, model, benchmark, tasks, mode, limit, position_policy, mode_settings, template, seed,
               chunk_size, max_attempts, sync, no_wait, **options):
        try:
            spec = actions.model_named(model)
            bench = Benchmark.objects.filter(slug=benchmark).first()
            if bench is None:
                raise CommandError(f"no benchmark {benchmark!r}")
            run = actions.start_run(
                model=spec, benchmark=bench, mode=mode, tasks=tasks, limit=limit, settings=dict(mode_settings),
                prompt_template=Path(template).read_text(encoding="utf-8") if template else None, seed=seed,
                position_policy=position_policy, chunk_size=chunk_size, max_attempts=max_attempts, enqueue=not sync)
        except actions.RunError as error:
            raise CommandError(f"{error} [{error.code}]") from None
        self.stdout.write(f"run {run.pk}: {run.items_total} items in {run.chunks_total} chunks, {run.mode}, "
                          f"prompt {run.prompt_version} ({run.prompt_sha256[:12]})")
        if no_wait:
            return
        run = self.follow(run, sync, unit="item")
        self.report(run)
        self.require_finished(run)

    def follow(self, run, sync, unit, detail=lambda run: ""):
        """Run it here (sync) or watch the workers run it, with a progress bar of the run's counters and
        `detail(run)` after them; the run as it ended (or as it was when watching stopped)."""
        with tqdm(total=run.items_total, unit=unit, file=sys.stderr, dynamic_ncols=True) as bar:
            def show(current):
                bar.update(current.items_done - bar.n)
                bar.set_postfix_str(f"{current.state}, chunks {current.chunks_done}/{current.chunks_total}"
                                    f"{detail(current)}")

            run = runner.run_sync(run, on_chunk=show) if sync else self.poll(run, show)
            show(run)
        return run

    def poll(self, run, show, every=1.0):
        try:
            while run.is_active:
                time.sleep(every)
                run = EvalRun.objects.get(pk=run.pk)
                show(run)
        except KeyboardInterrupt:
            self.stdout.write(f"\nstopped watching; run {run.pk} goes on (cancel it in the API or admin)")
        return run

    @staticmethod
    def require_finished(run):
        """A run that failed, was cancelled or is still going (watching stopped) is not what was asked for: the
        command exits non-zero, so that a script or scheduler checking its status sees it."""
        if run.state == "finished":
            return
        if run.is_active:
            raise CommandError(f"run {run.pk} is still {run.state}: it was not seen to finish")
        raise CommandError(f"run {run.pk} {run.state}" + (f": {run.reason}" if run.reason else ""))

    def report(self, run):
        summary = selectors.run_summary(run)
        style = self.style.SUCCESS if run.state == "finished" else self.style.ERROR
        self.stdout.write(style(f"run {run.pk} {run.state}" + (f": {run.reason}" if run.reason else "")))
        for slug, figures in summary["tasks"].items():
            shown = ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                              for k, v in figures.items() if k != "by_position")
            self.stdout.write(f"  {slug}: {shown}")
        if summary["overall_accuracy"] is not None:
            self.stdout.write(f"  overall accuracy (mean of tasks): {summary['overall_accuracy']:.3f}")
