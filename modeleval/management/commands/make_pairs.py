"""Pair the dialogues of self-chat runs (BotChat arena) as the items of a new benchmark."""
from django.core.management.base import BaseCommand, CommandError

from modeleval import arena
from modeleval.actions import RunError


class Command(BaseCommand):
    help = "Build a benchmark of arena pairs from self-chat runs that started from the same seeds."

    def add_arguments(self, parser):
        parser.add_argument("--runs", type=int, nargs="+", required=True, help="ids of finished self-chat runs")
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--reference", help=f"a run id (or {arena.HUMAN!r} with --ground-truth) that meets each "
                                             "other system")
        who.add_argument("--all-pairs", action="store_true", help="every pair of systems meets (the default)")
        parser.add_argument("--ground-truth", metavar="BENCHMARK",
                            help="slug of a MuTual import: its real dialogues join as system 'human'")
        parser.add_argument("--one-order", action="store_true",
                            help="one seeded order per pair instead of both (the judge still reads both)")
        parser.add_argument("--min-source-utterances", type=int, metavar="N",
                            help="only seeds whose real dialogue has N utterances or more (BotChat's arena: "
                                 f"{arena.BOTCHAT_ARENA_MIN_UTTERANCES}, its 222 seeds, the default when every run "
                                 "follows the botchat preset; 1 takes every seed)")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--benchmark-slug", help="default arena-<run ids>-seed-<seed>")

    def handle(self, *, runs, reference, all_pairs, ground_truth, one_order, seed, benchmark_slug,
               min_source_utterances, **options):
        try:
            benchmark = arena.make_pairs(runs=runs, reference=reference, ground_truth=ground_truth, seed=seed,
                                         both_orders=not one_order, benchmark_slug=benchmark_slug,
                                         min_source_utterances=min_source_utterances)
        except RunError as error:
            raise CommandError(f"{error} [{error.code}]") from None
        items = benchmark.tasks.get().items.count()
        self.stdout.write(self.style.SUCCESS(f"benchmark {benchmark.slug}: {items} pairs ({benchmark.description})"))
