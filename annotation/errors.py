"""Why an action refused: a machine code, a sentence for people, an HTTP status and figures.

Actions raise ActionError without knowing about HTTP; the API turns it into
{"code": ..., "detail": ..., **extra} with the status given here.
"""

# Membership and ownership
FORBIDDEN = "forbidden"
NOT_YOUR_ASSIGNMENT = "not_your_assignment"
OWN_WORK = "own_work"
# Leases and submissions
TOO_EARLY = "too_early"
ALREADY_SUBMITTED = "already_submitted"
LEASE_CLOSED = "lease_closed"
LEASE_EXPIRED = "lease_expired"
INVALID_ANSWERS = "invalid_answers"
NOT_CHANGEABLE = "not_changeable"
SUBMISSION_ID_REUSED = "submission_id_reused"
# Batches and QC
INVALID_TRANSITION = "invalid_transition"
NOT_COMPLETE = "not_complete"
NOT_IN_SAMPLE = "not_in_sample"
INVALID_VALUE = "invalid_value"
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


class ActionError(Exception):
    def __init__(self, code, detail, status=409, **extra):
        super().__init__(detail)
        self.code, self.detail, self.status, self.extra = code, detail, status, extra

    def as_dict(self):
        return {"code": self.code, "detail": self.detail, **self.extra}
