"""Why an action refused: a machine code from `Code`, a sentence for people and figures.

Actions raise ActionError (or a subclass naming where it came from) without knowing about HTTP; the
API's exception handler (`core.api`) answers {"code": ..., "detail": ..., **extra} with the status it
maps the code to, and pages and commands show the detail.
"""
from enum import StrEnum


class Code(StrEnum):
    # Membership and ownership
    FORBIDDEN = "forbidden"
    NOT_YOUR_ASSIGNMENT = "not_your_assignment"
    OWN_WORK = "own_work"
    NOT_FOUND = "not_found"
    # Leases and submissions
    TOO_EARLY = "too_early"
    ALREADY_SUBMITTED = "already_submitted"
    LEASE_CLOSED = "lease_closed"
    LEASE_EXPIRED = "lease_expired"
    INVALID_ANSWERS = "invalid_answers"
    NOT_CHANGEABLE = "not_changeable"
    SUBMISSION_ID_REUSED = "submission_id_reused"
    WRONG_ITEM = "wrong_item"  # a label sent for another item (or QC round) than the one it would be stored on
    # Batches and QC
    INVALID_TRANSITION = "invalid_transition"
    NOT_COMPLETE = "not_complete"
    NOT_IN_SAMPLE = "not_in_sample"
    INVALID_VALUE = "invalid_value"
    INVALID_PARAMETER = "invalid_parameter"
    SAMPLE_INCOMPLETE = "sample_incomplete"
    BELOW_THRESHOLD = "below_threshold"
    REASON_REQUIRED = "reason_required"
    MAX_ROUNDS = "max_rounds_reached"
    NOT_REVIEWER = "not_reviewer"
    # Disagreements, gold, campaigns
    ALREADY_RESOLVED = "already_resolved"
    AWAITING_LABELS = "awaiting_labels"
    GOLD_FROZEN = "gold_frozen"
    INVALID_SETTINGS = "invalid_settings"
    INVALID_CAMPAIGN = "invalid_campaign"
    NOTHING_TO_CUT = "nothing_to_cut"
    DUPLICATE = "duplicate"
    # People
    INVALID_ACCOUNTS = "invalid_accounts"
    ACCEPTANCE_REQUIRED = "acceptance_required"  # the person, or an administrator, must agree first
    # Imports and exports: a malformed file (file, line, field)
    INVALID_FILE = "invalid_file"
    # Models and runs
    MODEL_EXISTS = "model_exists"
    MODEL_SOURCE_MISSING = "model_source_missing"
    MODEL_MISMATCH = "model_mismatch"
    UNKNOWN_MODEL = "unknown_model"
    UNKNOWN_TASK = "unknown_task"
    UNKNOWN_BENCHMARK = "unknown_benchmark"
    UNKNOWN_RUN = "unknown_run"
    BENCHMARK_EXISTS = "benchmark_exists"
    BAD_TEMPLATE = "bad_template"
    BAD_MODE = "bad_mode"
    BAD_SETTINGS = "bad_settings"
    BAD_SEEDS = "bad_seeds"
    BAD_ENDPOINT = "bad_endpoint"
    BAD_API_MODEL = "bad_api_model"
    BAD_KEY_ENV = "bad_key_env"
    KEY_ENV_NOT_ALLOWED = "key_env_not_allowed"
    ENDPOINT_NOT_ALLOWED = "endpoint_not_allowed"
    NOT_API = "not_api"
    PROBE_FAILED = "probe_failed"
    MODE_UNSUITED = "mode_unsuited"
    MODE_UNSUPPORTED = "mode_unsupported"
    NOT_SELFCHAT = "not_selfchat"
    SEEDS_DIFFER = "seeds_differ"
    NO_ITEMS = "no_items"
    NO_GOLD = "no_gold"
    NO_EXAMPLES = "no_examples"
    NOT_ACTIVE = "not_active"
    BROKER_UNAVAILABLE = "broker_unavailable"
    # Reports
    INVALID_SCOPE = "invalid_scope"
    TOO_MANY_REPORTS = "too_many_reports"
    # Limits per person
    TOO_MANY_RUNS = "too_many_runs"
    TOO_MANY_FLAGS = "too_many_flags"


class ActionError(Exception):
    """A refusal: `code` (a Code; an unknown one is a programming error), `detail` for people, and
    figures (`extra`) that travel with it."""

    def __init__(self, code, detail, **extra):
        super().__init__(detail)
        self.code, self.detail, self.extra = Code(code), detail, extra

    def as_dict(self):
        return {"code": self.code.value, "detail": self.detail, **self.extra}
