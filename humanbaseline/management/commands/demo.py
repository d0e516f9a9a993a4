"""Load the demo: sample items of each kind, FED when ../shared/data/fed is there, users for each role."""
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction

from benchmarks.actions import import_items

DEMO_DATA = Path(__file__).resolve().parents[3] / "benchmarks" / "demo_data"
DEMO_PASSWORD = "demo-pass-123"
# username -> (role shown to the person, staff?)
DEMO_USERS = {
    "admin": ("manager (staff, admin site)", True),
    "annotator1": ("annotator", False),
    "annotator2": ("annotator", False),
    "annotator3": ("annotator", False),
    "qc1": ("quality controller", False),
    "expert1": ("expert", False),
    "trainer1": ("trainer", False),
    "researcher1": ("researcher (viewer)", False),
}


class Command(BaseCommand):
    help = "Load demo benchmarks, FED (when the shared data is there) and demo users. Safe to run twice."

    def add_arguments(self, parser):
        parser.add_argument("--fed", default=str(settings.SHARED_DATA_DIR / "fed" / "fed_data.json"),
                            help="path of fed_data.json (skipped with a message when absent)")

    def handle(self, fed, **options):
        say = self.stdout.write
        say(str(import_items(DEMO_DATA / "dialogbench_sample.jsonl", "dialogbench", "dialogbench-demo")))
        say(str(import_items(DEMO_DATA / "diqad_sample.jsonl", "diqad", "diqad-demo")))
        fed_path = Path(fed)
        if fed_path.is_file():
            say(str(import_items(fed_path, "fed", "fed")))
        else:
            say(self.style.WARNING(f"FED skipped: {fed_path} not found (pass --fed PATH)"))
        researchers, _ = Group.objects.get_or_create(name="researchers")
        for username, (_, staff) in DEMO_USERS.items():
            user, created = User.objects.get_or_create(username=username,
                                                       defaults={"is_staff": staff, "is_superuser": staff})
            if created:
                user.set_password(DEMO_PASSWORD)
                user.save()
            if username.startswith("researcher"):
                user.groups.add(researchers)
        self.extend_demo(say)
        say(self.style.SUCCESS(f"\nDemo logins (password for all: {DEMO_PASSWORD}):"))
        for username, (role, _) in DEMO_USERS.items():
            say(f"  {username:<12} {role}")

    def extend_demo(self, say):
        """Campaigns, runs and reports add their demo content here as they land."""
        # Annotation: a DiQAD production campaign, a DialogBench human baseline and, with FED, its ratings.
        from annotation import actions as annotation
        from annotation.importers import import_ratings
        from annotation.models import Campaign
        from benchmarks.models import Benchmark

        admin = User.objects.get(username="admin")
        members = {"annotator": ["annotator1", "annotator2", "annotator3"], "qc": ["qc1"], "expert": ["expert1"],
                   "trainer": ["trainer1"], "viewer": ["researcher1"]}
        campaigns = [
            ("diqad-demo", "DiQAD demo: production with QC", "production",
             {"overlap": 2, "min_reading_seconds": 5, "batch_size": 4, "qc_sample_size": 4, "seed": 7,
              "guidelines": "# DiQAD quality\n\nScore 2 meets every dimension; 1 answers but lacks proactivity "
                            "or informativeness; 0 fails grammar, relevance, consistency or empathy. Use -1, -2 or "
                            "abandon for private data."}),
            ("dialogbench-demo", "DialogBench demo: human baseline", "human_baseline",
             {"overlap": 3, "items_per_task": 50, "seed": 7,
              "guidelines": "# DialogBench\n\nRead the dialogue and choose the best option. Work alone."}),
        ]
        for slug, name, protocol, values in campaigns:
            campaign = Campaign.objects.filter(benchmark__slug=slug, name=name).first()
            if campaign is None:
                campaign = annotation.create_campaign(actor=admin, name=name, benchmark=slug, protocol=protocol,
                                                      settings=values)
                for role, usernames in members.items():
                    for user in User.objects.filter(username__in=usernames):
                        annotation.add_member(campaign, actor=admin, user=user, role=role)
                annotation.cut_batches(campaign, actor=admin)
            say(f"{name}: campaign {campaign.pk}, {campaign.batches.count()} batches")
        # FED items come from the shared data folder when it is there; so do their ratings (a second run adds nothing).
        fed_file = settings.SHARED_DATA_DIR / "fed" / "fed_data.json"
        if Benchmark.objects.filter(slug="fed").exists() and fed_file.is_file():
            say(str(import_ratings(fed_file, "fed", "fed")))

        # Model evaluation: register the packaged model (its GGUF's hash only; nothing is scored here).
        from modeleval.actions import RunError, register_packaged_model

        try:
            name = register_packaged_model().name
            say(f"model {name} registered; score it with: "
                f"manage.py score --model {name} --benchmark dialogbench-demo --sync")
        except RunError as missing:
            say(self.style.WARNING(f"packaged model skipped: {missing}"))
            return
        self.demo_diqad_run(say, name)

    def demo_diqad_run(self, say, name):
        """DiQAD's quality scored by the packaged model with DiQAD's own prompt (its appendix C chat), so that
        the DiQAD campaign's report has a model row (Acc, UAR, kappa, ... against the human labels). The run is
        queued, never scored here: `serve` answers first and its worker scores it, its progress on the runs page."""
        from benchmarks.models import Benchmark
        from modeleval import actions as runs
        from modeleval.models import ACTIVE_RUN_STATES, ChunkState, EvalRun, Mode, RunState

        benchmark = Benchmark.objects.get(slug="diqad-demo")
        mode, settings = Mode.RATING, {"preset": "diqad"}  # the run the demo starts, and finds again on a rerun
        earlier = EvalRun.objects.filter(benchmark=benchmark, model__name=name, mode=mode,
                                         state__in=(*ACTIVE_RUN_STATES, RunState.FINISHED)).order_by("-pk").first()
        try:
            if earlier is None:
                run = runs.start_run(model=runs.model_named(name), benchmark=benchmark, mode=mode,
                                     settings=settings)
                say(f"DiQAD quality by {name}: run {run.pk} queued for the model worker")
            elif earlier.is_active:
                # Left unfinished by a worker that was stopped: a chunk it had taken went with it (the embedded
                # broker keeps no unacknowledged message), so every chunk not done is queued again; a chunk
                # delivered twice is scored once (modeleval.runner).
                transaction.on_commit(lambda: runs.enqueue_chunks(
                    earlier.pk, states=(ChunkState.PENDING, ChunkState.RUNNING)))
                say(f"DiQAD quality by {name}: run {earlier.pk} queued again for the model worker")
        except runs.RunError as error:
            say(self.style.WARNING(f"DiQAD quality by {name} not queued: {error}"))
