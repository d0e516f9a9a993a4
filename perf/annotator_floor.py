"""The floor of the annotator cycle: the statements one `next` and one `submit` send to PostgreSQL (as
tests/annotation/test_cycle_statements.py counts them, `?progress=0`), sent straight from psycopg 3 by each
simulated annotator over its own connection, with no HTTP and no Django around them. Same tables, same
joins, same row locks and SKIP LOCKED, same transactions; what is left out is everything around the
statements (HTTP, routing, authentication classes, serializers, the ORM).

Simplifications that do not change the statements' count or locks: the load answers every item with the
same label, so an item's outcome is "agreement" once its k labels are in (the Django side works it out with
annotation.rules); a batch is never handed in during a level (each level's batch holds all its items).
"""
import json
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta

import psycopg

TOKEN = ('SELECT t.key, t.user_id, t.created, u.id, u.password, u.last_login, u.is_superuser, u.username, '
         'u.first_name, u.last_name, u.email, u.is_staff, u.is_active, u.date_joined FROM authtoken_token t '
         'JOIN auth_user u ON t.user_id = u.id WHERE t.key = %s LIMIT 21')
# The person's membership in a labelling role, locked, with the campaign's worker role (the API reads the campaign
# only when this refuses).
LOCK_ME = ("SELECT m.role, c.worker_role FROM annotation_membership m INNER JOIN annotation_campaign c "
           "ON m.campaign_id = c.id WHERE m.active AND m.campaign_id = %(c)s AND m.user_id = %(user)s "
           "AND m.role IN ('annotator', 'expert') ORDER BY m.id FOR UPDATE OF m")
ME = ("SELECT (SELECT a.id FROM annotation_assignment a WHERE a.annotator_id = %(user)s AND a.campaign_id = %(c)s "
      "AND a.expires_at > %(now)s AND a.status = 'leased' ORDER BY a.served_at LIMIT 1) AS live, "
      "(SELECT b.id FROM annotation_batch b WHERE b.campaign_id = %(c)s AND b.state = 'annotating' "
      "ORDER BY b.number LIMIT 1) AS first_batch")
FREE_ITEM = ("SELECT bi.id AS lease_item, bi.campaign_id AS lease_campaign, bi.item_id AS lease_dialogue, "
             "bi.taken AS lease_taken, b.round AS lease_round, b.settings_id AS lease_settings, bi.*, (SELECT a.slot "
             "FROM annotation_assignment a WHERE a.batch_item_id = bi.id "
             "AND a.round = b.round AND a.status IN ('leased', 'submitted') ORDER BY 1 DESC LIMIT 1) AS top_slot, "
             "b.*, s.*, i.*, t.* FROM annotation_batchitem bi JOIN annotation_batch b ON bi.batch_id = b.id "
             "LEFT JOIN annotation_campaignsettings s ON b.settings_id = s.id "
             "JOIN benchmarks_item i ON bi.item_id = i.id JOIN benchmarks_task t ON i.task_id = t.id "
             "WHERE b.state = 'annotating' AND bi.batch_id = %(batch)s AND bi.status = 'pending' "
             "AND bi.taken < bi.needed AND NOT EXISTS (SELECT 1 FROM annotation_assignment a "
             "WHERE a.annotator_id = %(user)s AND a.batch_item_id = bi.id AND a.round = b.round "
             "AND a.status IN ('leased', 'submitted', 'released') LIMIT 1) "
             "ORDER BY bi.position LIMIT 1 FOR UPDATE OF bi SKIP LOCKED")
SLOTS = ("SELECT a.slot FROM annotation_assignment a WHERE a.batch_item_id = %s AND a.round = %s "
         "AND a.status IN ('leased', 'submitted')")
LEASE = ("INSERT INTO annotation_assignment (campaign_id, batch_item_id, item_id, annotator_id, round, slot, "
         "settings_id, status, served_at, expires_at, closed_at) "
         "VALUES (%s, %s, %s, %s, %s, %s, %s, 'leased', %s, %s, NULL) RETURNING id")
TAKEN = "UPDATE annotation_batchitem SET taken = taken + 1 WHERE id = %s"
LOCKED_LEASE = ("SELECT a.id, a.annotator_id, a.status, a.served_at, a.expires_at, a.round, a.slot, a.campaign_id, "
                "a.batch_item_id, a.item_id, a.settings_id, bi.needed, bi.batch_id AS lease_batch, "
                "EXISTS (SELECT 1 FROM annotation_membership m WHERE m.active AND m.campaign_id = a.campaign_id "
                "AND m.role = 'annotator' AND m.user_id = %(user)s LIMIT 1) AS as_annotator, "
                "EXISTS (SELECT 1 FROM annotation_membership m WHERE m.active AND m.campaign_id = a.campaign_id "
                "AND m.role = 'expert' AND m.user_id = %(user)s LIMIT 1) AS as_expert, "
                "c.*, bi.*, i.*, t.*, s.* FROM annotation_assignment a "
                "JOIN annotation_batchitem bi ON a.batch_item_id = bi.id "
                "JOIN annotation_campaign c ON a.campaign_id = c.id JOIN benchmarks_item i ON a.item_id = i.id "
                "JOIN benchmarks_task t ON i.task_id = t.id JOIN annotation_campaignsettings s ON a.settings_id = s.id "
                "WHERE a.id = %(id)s FOR UPDATE OF bi")
CLOSE = ("UPDATE annotation_assignment SET status = 'submitted', closed_at = %s "
         "WHERE id = %s AND status = 'leased'")
LABEL = ("INSERT INTO annotation_annotation (campaign_id, batch_item_id, item_id, annotator_id, assignment_id, round, "
         "slot, settings_id, answers, value, excluded, excluded_by, dwell_seconds, client_submission_id, "
         "submitted_at, superseded_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, false, '[]', %s, %s, %s, NULL) "
         "RETURNING id")
LABELS = ("SELECT u.username, an.value, an.excluded FROM annotation_annotation an JOIN auth_user u "
          "ON an.annotator_id = u.id WHERE an.batch_item_id = %s AND an.round = %s ORDER BY an.submitted_at, an.id")
OUTCOME = ("UPDATE annotation_batchitem SET needed = %s, status = 'labelled', final_value = %s, "
           "final_method = 'agreement' WHERE id = %s")
HAND_IN = ("SELECT b.*, c.*, s.* FROM annotation_batch b JOIN annotation_campaignsettings s ON b.settings_id = s.id "
           "JOIN annotation_campaign c ON b.campaign_id = c.id WHERE b.id = %s AND s.auto_hand_in "
           "AND b.state = 'annotating' AND NOT EXISTS (SELECT 1 FROM annotation_batchitem x WHERE x.batch_id = b.id "
           "AND x.status NOT IN ('labelled', 'excluded') LIMIT 1) ORDER BY b.campaign_id, b.number LIMIT 1")


def libpq_url(database_url):
    return database_url.replace("postgres://", "postgresql://", 1)


class FloorClient:
    """One simulated annotator on its own psycopg connection; next() and submit() as the load generator
    expects (`codes` counts 200 for a cycle step that did its work)."""

    def __init__(self, database_url, token, campaign_id, answers):
        # Autocommit outside the two transactions, as Django runs: a read sends no BEGIN.
        self.conn = psycopg.connect(libpq_url(database_url), autocommit=True)
        self.token, self.campaign_id, self.answers = token, campaign_id, answers
        self.primary = "score"
        self.codes = Counter()
        self.user_id = self.conn.execute(TOKEN, (token,)).fetchone()[1]

    def close(self):
        self.conn.close()

    def next(self):
        conn, now = self.conn, datetime.now(UTC)
        conn.execute(TOKEN, (self.token,)).fetchone()
        with conn.transaction():
            me = {"user": self.user_id, "c": self.campaign_id, "now": now}
            if not any(role == worker_role for role, worker_role in conn.execute(LOCK_ME, me).fetchall()):
                raise RuntimeError("not an annotator of this campaign")
            live, first_batch = conn.execute(ME, me).fetchone()
            if live:
                self.codes[200] += 1
                return live
            if first_batch is None:
                return None
            cur = conn.execute(FREE_ITEM, {"batch": first_batch, "user": self.user_id})
            row = cur.fetchone()
            if row is None:
                return None
            item = dict(zip([c.name for c in cur.description], row, strict=True))
            bi_id, campaign_id, item_id, taken = (item["lease_item"], item["lease_campaign"], item["lease_dialogue"],
                                                  item["lease_taken"])
            slot = taken + 1
            if (item["top_slot"] or 0) != taken:  # a look from before the lock: read the slots (as Django does)
                used = {r[0] for r in conn.execute(SLOTS, (bi_id, item["lease_round"]))}
                slot = min(s for s in range(1, item["needed"] + 1) if s not in used)
            round_, settings_id, lease_minutes = item["lease_round"], item["lease_settings"], item["lease_minutes"]
            assignment = conn.execute(LEASE, (campaign_id, bi_id, item_id, self.user_id, round_, slot,
                                              settings_id, now, now + timedelta(minutes=lease_minutes))).fetchone()[0]
            conn.execute(TAKEN, (bi_id,))
        self.codes[200] += 1
        return assignment

    def submit(self, assignment_id):
        conn, now = self.conn, datetime.now(UTC)
        conn.execute(TOKEN, (self.token,)).fetchone()
        with conn.transaction():
            cur = conn.execute(LOCKED_LEASE, {"user": self.user_id, "id": assignment_id})
            row = dict(zip([c.name for c in cur.description][:15], cur.fetchone()[:15], strict=True))
            if row["annotator_id"] != self.user_id or not row["as_annotator"] or row["status"] != "leased":
                raise RuntimeError(f"not a live lease of this annotator: {row}")
            if now >= row["expires_at"]:
                raise RuntimeError("lease expired")
            if conn.execute(CLOSE, (now, assignment_id)).rowcount != 1:
                raise RuntimeError("lease closed meanwhile")
            value = self.answers[self.primary]
            conn.execute(LABEL, (row["campaign_id"], row["batch_item_id"], row["item_id"], self.user_id, assignment_id,
                                 row["round"], row["slot"], row["settings_id"], json.dumps(self.answers),
                                 json.dumps(value), (now - row["served_at"]).total_seconds(), uuid.uuid4(), now))
            labels = conn.execute(LABELS, (row["batch_item_id"], row["round"])).fetchall()
            final = len(labels) >= row["needed"]
            if final:
                conn.execute(OUTCOME, (row["needed"], json.dumps(value), row["batch_item_id"]))
        if final:
            conn.execute(HAND_IN, (row["lease_batch"],)).fetchone()
        self.codes[200] += 1
        return True
