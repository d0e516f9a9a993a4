"""Let a model chat with itself from human chat seeds (BotChat) and keep the dialogues as items."""
from django.core.management.base import BaseCommand, CommandError

from modeleval import actions
from modeleval.management.commands.score import setting
from modeleval.models import RunState
from modeleval.scorers import loops
from modeleval.selfchat_runs import DEFAULTS, run_selfchat

# Settings `--set` may give (the others have options of their own).
SETTABLE = ("preset", "decoding", "reply_cut", "seed")


class Command(BaseCommand):
    help = "Generate self-chat dialogues from chat seeds and store them as a new benchmark's items."

    def add_arguments(self, parser):
        parser.add_argument("--model", required=True,
                            help=f"registered model name ({actions.PACKAGED_NAME} is registered on first use)")
        seeds = parser.add_mutually_exclusive_group(required=True)
        seeds.add_argument("--seeds", help='JSON lines of {"id", "utterances"} (MuTual shape)')
        seeds.add_argument("--seeds-benchmark", metavar="SLUG",
                           help="a MuTual import (import_items --format mutual): its real dialogues are the seeds")
        parser.add_argument("--limit", type=int, help="the first N seeds only")
        parser.add_argument("--utterances", type=int,
                            help=f"utterances per dialogue, the 2 of the seed included ({DEFAULTS['utterances']}, "
                                 "or the preset's)")
        parser.add_argument("--system-prompt", help="ours, or the preset's, when not given")
        parser.add_argument("--max-new-tokens", type=int,
                            help=f"length cap of one utterance ({DEFAULTS['max_new_tokens']}, or the preset's)")
        parser.add_argument("--loop-similarity", default=loops.DEFAULT_SIMILARITY, choices=sorted(loops.SIMILARITIES))
        parser.add_argument("--loop-threshold", type=float, default=loops.DEFAULT_THRESHOLD)
        parser.add_argument("--batch-size", type=int, default=32)
        parser.add_argument("--set", action="append", type=setting, default=[], dest="run_settings",
                            metavar="KEY=VALUE", help=f"one of {', '.join(SETTABLE)}, e.g. --set preset=botchat")

    def handle(self, *, model, seeds, seeds_benchmark, limit, utterances, system_prompt, max_new_tokens,
               loop_similarity, loop_threshold, batch_size, run_settings, **options):
        given = dict(run_settings)
        if unknown := sorted(set(given) - set(SETTABLE)):
            raise CommandError(f"unknown settings {unknown}; --set takes {list(SETTABLE)}")
        try:
            run = run_selfchat(model=actions.model_named(model), seeds_path=seeds, seeds_benchmark=seeds_benchmark,
                               limit=limit, utterances=utterances, system_prompt=system_prompt,
                               max_new_tokens=max_new_tokens, similarity=loop_similarity, threshold=loop_threshold,
                               batch_size=batch_size, **given)
        except actions.RunError as error:
            raise CommandError(f"{error} [{error.code}]") from None
        if run.state != RunState.FINISHED:  # e.g. cancelled while it was generating: no dialogues written
            raise CommandError(f"run {run.pk} {run.state}" + (f": {run.reason}" if run.reason else ""))
        looping = run.predictions.filter(answer="loop").count()
        self.stdout.write(self.style.SUCCESS(
            f"run {run.pk}: {run.items_total} dialogues of up to {run.settings['utterances']} utterances in benchmark "
            f"{run.benchmark.slug}, {looping} looping"))
