from rest_framework import serializers

import studies
from benchmarks.models import Benchmark
from studies.vocabulary import DECODINGS

from . import modes, prompting, selfchat_runs
from .models import ChunkState, Dtype, EvalRun, Mode, ModelSpec, PositionPolicy, Prediction, RunChunk, RunEvent
from .scorers import loops, selfchat_generation


class ModelSpecSerializer(serializers.ModelSerializer):
    dtype = serializers.ChoiceField(Dtype.choices, default=Dtype.FLOAT32)

    class Meta:
        model = ModelSpec
        fields = ["id", "name", "source", "sha256", "revision", "dtype", "device", "max_length", "use_chat_template",
                  "chat_template", "backend", "endpoint", "api_model", "api_key_env", "concurrency", "capabilities",
                  "created_at"]
        read_only_fields = ["sha256", "capabilities", "created_at"]

    def validate_chat_template(self, value):
        try:
            prompting.check_chat_template(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from None
        return value


class RunProgressSerializer(serializers.Serializer):
    items_done = serializers.IntegerField()
    items_total = serializers.IntegerField()
    chunks_done = serializers.IntegerField()
    chunks_total = serializers.IntegerField()
    fraction = serializers.SerializerMethodField(help_text="Items scored, those of chunks being scored included, over "
                                                           "the run's items")
    items_scoring = serializers.SerializerMethodField(help_text="Items of the chunks being scored now that are scored "
                                                                "already (counted in items_done once their chunk is)")
    chunks_running = serializers.SerializerMethodField(
        help_text="Chunks being scored now; a cancelled run's running chunk still finishes and is counted")

    def get_items_scoring(self, run) -> int:
        counted = getattr(run, "items_scoring", None)  # annotated by selectors.runs()
        if counted is None and not hasattr(run, "chunks_running"):
            counted = sum(run.chunks.filter(state=ChunkState.RUNNING).values_list("items_scored", flat=True))
        return counted or 0

    def get_fraction(self, run) -> float:
        done = run.items_done + (self.get_items_scoring(run) if run.is_active else 0)
        return min(1.0, done / run.items_total) if run.items_total else 0.0

    def get_chunks_running(self, run) -> int:
        counted = getattr(run, "chunks_running", None)  # annotated by selectors.runs()
        return counted if counted is not None else run.chunks.filter(state=ChunkState.RUNNING).count()


class EvalRunSerializer(serializers.ModelSerializer):
    model = serializers.SlugRelatedField(slug_field="name", read_only=True)
    benchmark = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    tasks = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    progress = RunProgressSerializer(source="*", read_only=True)
    created_by = serializers.StringRelatedField()
    protocol = serializers.SerializerMethodField(help_text="The study the run's preset follows and every setting "
                                                           "that differs from its published protocol; null for none")
    writes = serializers.SerializerMethodField(help_text="What the run writes instead of scoring items: dialogues "
                                                         "(self-chat), classifier (training); null for a scoring run")

    class Meta:
        model = EvalRun
        fields = ["id", "model", "benchmark", "tasks", "selection", "mode", "settings", "prompt_template",
                  "prompt_sha256", "prompt_version", "seed", "position_policy", "chunk_size", "max_attempts", "state",
                  "reason", "progress", "created_by", "created_at", "started_at", "finished_at", "protocol", "writes"]
        read_only_fields = fields

    def get_protocol(self, run) -> dict | None:
        return studies.protocol(run.mode, run.settings, run.position_policy)

    def get_writes(self, run) -> str | None:
        writes = modes.plan(run.mode).writes
        return writes and writes.value


class StartRunSerializer(serializers.Serializer):
    """What `actions.start_run` takes, by name and slug."""

    model = serializers.SlugRelatedField(slug_field="name", queryset=ModelSpec.objects.all())
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    tasks = serializers.ListField(child=serializers.SlugField(), required=False, allow_null=True, default=None,
                                  help_text="Task slugs; all tasks of the benchmark when absent")
    item_ids = serializers.ListField(child=serializers.IntegerField(), required=False, allow_null=True, default=None)
    limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None,
                                     help_text="At most this many items per task")
    mode = serializers.ChoiceField(Mode.choices, default=Mode.LOGLIKELIHOOD)
    settings = serializers.DictField(required=False, default=dict)
    prompt_template = serializers.CharField(required=False, allow_blank=True, default="")
    prompt_version = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    seed = serializers.IntegerField(default=0)
    position_policy = serializers.ChoiceField(PositionPolicy.choices, required=False, allow_null=True, default=None,
                                              help_text="The options' order; absent: the study preset's, else as_is")
    chunk_size = serializers.IntegerField(min_value=1, max_value=10_000, default=16)
    max_attempts = serializers.IntegerField(min_value=1, max_value=20, default=3)


class StartTrainingSerializer(serializers.Serializer):
    """What `actions.start_training` takes, by name and slug."""

    model = serializers.SlugRelatedField(slug_field="name", queryset=ModelSpec.objects.all(),
                                         help_text="The local base model the classification head goes on")
    benchmark = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all())
    question = serializers.CharField(required=False, allow_blank=True, default="",
                                     help_text="The question trained on; the primary one when empty")
    settings = serializers.DictField(required=False, default=dict,
                                     help_text="Training settings; DiQAD's recipe for those left out")
    seed = serializers.IntegerField(default=0)
    max_attempts = serializers.IntegerField(min_value=1, max_value=20, default=3)


class RunModeSerializer(serializers.Serializer):
    mode = serializers.CharField()
    label = serializers.CharField()
    available = serializers.BooleanField()
    reasons = serializers.ListField(child=serializers.CharField(), help_text="Why the mode cannot score the tasks")
    presets = serializers.ListField(child=serializers.DictField(), help_text="The studies a run of this mode can "
                                                                             "follow: {preset, title}")
    writes = serializers.CharField(allow_null=True, help_text="What a run of this mode writes instead of scoring: "
                                                              "dialogues (self-chat), classifier (training); null")


class RunChunkSerializer(serializers.ModelSerializer):
    class Meta:
        model = RunChunk
        fields = ["index", "state", "attempts", "worker", "error", "started_at", "finished_at"]


class RunEventSerializer(serializers.ModelSerializer):
    chunk = serializers.SlugRelatedField(slug_field="index", read_only=True)
    actor = serializers.StringRelatedField()

    class Meta:
        model = RunEvent
        fields = ["kind", "chunk", "actor", "reason", "figures", "created_at"]


class PredictionSerializer(serializers.ModelSerializer):
    external_id = serializers.CharField(source="item.external_id", read_only=True)
    task = serializers.CharField(source="item.task.slug", read_only=True)

    class Meta:
        model = Prediction
        fields = ["id", "run", "item", "external_id", "task", "variant", "gold", "options", "prompt", "raw_output",
                  "answer", "answer_norm", "answer_per_token", "parse_status", "correct", "rating", "probabilities",
                  "fewshot_ids", "created_at", "updated_at"]
        read_only_fields = fields


class StartSelfChatSerializer(serializers.Serializer):
    """What `selfchat_runs.start_selfchat` takes, by name and slug; a setting left out is ours, or the preset's."""

    model = serializers.SlugRelatedField(slug_field="name", queryset=ModelSpec.objects.all())
    seeds = serializers.SlugRelatedField(slug_field="slug", queryset=Benchmark.objects.all(),
                                         help_text="A MuTual import: the first two utterances of its real dialogues "
                                                   "are the seeds")
    limit = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None,
                                     help_text="The first N seeds only; all when absent")
    preset = serializers.ChoiceField(["", *selfchat_runs.PRESETS], required=False, default="",
                                     help_text="A study's self-chat settings (botchat), or ours")
    utterances = serializers.IntegerField(min_value=3, required=False, allow_null=True, default=None,
                                          help_text="Utterances per dialogue, the seed's two included")
    max_new_tokens = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None)
    decoding = serializers.ChoiceField(DECODINGS, required=False, allow_null=True, default=None)
    reply_cut = serializers.ChoiceField(selfchat_generation.REPLY_CUTS, required=False, allow_null=True, default=None)
    system_prompt = serializers.CharField(required=False, allow_null=True, default=None, trim_whitespace=False)
    loop_similarity = serializers.ChoiceField(sorted(loops.SIMILARITIES), default=loops.DEFAULT_SIMILARITY)
    loop_threshold = serializers.FloatField(min_value=0, max_value=1, default=loops.DEFAULT_THRESHOLD)
    batch_size = serializers.IntegerField(min_value=1, max_value=1024, default=32)
    seed = serializers.IntegerField(default=0)


class MakePairsSerializer(serializers.Serializer):
    """What `arena.make_pairs` takes: finished self-chat runs by id, the real dialogues of a MuTual import."""

    runs = serializers.ListField(child=serializers.IntegerField(), min_length=1,
                                 help_text="Ids of finished self-chat runs made from the same seeds")
    ground_truth = serializers.SlugField(required=False, allow_blank=True, default="",
                                         help_text="Slug of a MuTual import: its real dialogues join as 'human'")
    reference = serializers.CharField(required=False, allow_blank=True, default="",
                                      help_text="A run id, or 'human', that meets each other system; every pair "
                                                "when empty")
    both_orders = serializers.BooleanField(default=True)
    min_source_utterances = serializers.IntegerField(min_value=1, required=False, allow_null=True, default=None,
                                                     help_text="Only seeds whose real dialogue has this many "
                                                               "utterances or more (BotChat's arena: 4)")
    seed = serializers.IntegerField(default=0)
    benchmark_slug = serializers.SlugField(required=False, allow_blank=True, default="", max_length=100)


class PairsBuiltSerializer(serializers.Serializer):
    benchmark = serializers.CharField(help_text="The new benchmark's slug")
    name = serializers.CharField()
    description = serializers.CharField()
    items = serializers.IntegerField()
