"""Every write of the annotation app. Each action checks who may do it, locks what it must, writes, and
records an Event, in one transaction.

Lock order, everywhere: campaign, then batch, then batch item, then assignment. Leases lock batch items
with SKIP LOCKED so that concurrent annotators pass each other instead of queueing; on SQLite the
locks are no-ops and the immediate transactions of the settings serialise the writers instead.

One module per area: _common (roles, events, the batch state machine), campaigns (settings, members, cutting
batches), leases, submissions (and item outcomes, disagreements decided), batches (hand-in, QC review, accept,
reject, reopen), gold (versions, and the gold reports cite), corrections (annotators' own changes and flags).
Callers use the names re-exported here: `from annotation import actions; actions.submit_annotation(...)`.
"""
from ._common import (
                      MAX_COMMENT,
                      PROTOCOL_DEFAULTS,
                      RATINGS_IMPORTED,
                      SYSTEM_REASONS,
                      TRANSITIONS,
                      current_settings,
                      forbidden,
                      jsonable,
                      record_event,
                      require_role,
                      wrong_state,
)
from .batches import (
                      accept_batch,
                      auto_hand_in,
                      hand_in_batch,
                      hand_in_requested,
                      record_qc_label,
                      reject_batch,
                      reopen_batch,
                      start_review,
)
from .campaigns import (
                      active_draw,
                      add_member,
                      campaign_items,
                      create_campaign,
                      cut_batches,
                      next_batch_number,
                      set_member_active,
                      update_settings,
)
from .corrections import amend_annotation, flag_item
from .gold import (
                      choose_benchmark_gold,
                      create_gold_version,
                      freeze_gold_version,
                      import_gold_version,
                      may_choose_benchmark_gold,
                      pin_gold_version,
)
from .invitations import accept_invitation, decline_invitation, invite_member, withdraw_invitation
from .leases import Lease, lease_next_item, reclaim_expired_leases, release_assignment, start_next_open_batch
from .submissions import Submission, resolve_disagreement, round_outcome, submit_annotation

__all__ = [
    "TRANSITIONS",
    "PROTOCOL_DEFAULTS",
    "RATINGS_IMPORTED",
    "SYSTEM_REASONS",
    "forbidden",
    "require_role",
    "jsonable",
    "record_event",
    "wrong_state",
    "current_settings",
    "MAX_COMMENT",
    "create_campaign",
    "update_settings",
    "add_member",
    "set_member_active",
    "invite_member",
    "accept_invitation",
    "decline_invitation",
    "withdraw_invitation",
    "campaign_items",
    "next_batch_number",
    "active_draw",
    "cut_batches",
    "Lease",
    "start_next_open_batch",
    "lease_next_item",
    "release_assignment",
    "reclaim_expired_leases",
    "Submission",
    "submit_annotation",
    "round_outcome",
    "resolve_disagreement",
    "hand_in_batch",
    "hand_in_requested",
    "start_review",
    "record_qc_label",
    "accept_batch",
    "reject_batch",
    "reopen_batch",
    "auto_hand_in",
    "create_gold_version",
    "freeze_gold_version",
    "import_gold_version",
    "pin_gold_version",
    "may_choose_benchmark_gold",
    "choose_benchmark_gold",
    "amend_annotation",
    "flag_item",
]
