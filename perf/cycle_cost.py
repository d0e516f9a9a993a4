"""What one annotator cycle (next + submit) costs inside one Django process: CPU time and SQL statements, with no
HTTP server, no other users and no waiting. CPU time is what a busy shared machine changes least, so two versions
of the code can be compared on it when wall-clock figures are too noisy.

    python perf/cycle_cost.py --cycles 400 [--progress] [--page] [--rounds 3] [--profile 25]

The API cycle: two annotators take turns on a campaign with overlap 2 (so every other submit is an item's last
label), through DRF's test client with token authentication, production settings otherwise; `?progress=0` unless
--progress. --page adds the annotation page's cycle beside it, as frontend/static/frontend/js/annotate.js sends
it: signed in with the session cookie, the CSRF header on writes (checks enforced), `next` without progress and
the submission with the labeller's progress; two more annotators on their own campaign of the same shape. The
sides take turns --rounds times (median CPU per cycle of each). PostgreSQL's CPU per cycle is read from the
process of the script's connection (this machine's PostgreSQL: /proc), so it counts that side's statements alone,
whatever else the machine runs. --items sets the campaign's size (one batch; at least what the cycles need), as
the load script's --items does. --profile N prints cProfile's N costliest
functions (cumulative) for one round of each side. Prints one JSON line per side.
"""
import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from perf._services import drop_database, recreate_database  # noqa: E402


class ApiSide:
    """Token authentication; the progress only with --progress."""

    def __init__(self, campaign, people, progress):
        from rest_framework.authtoken.models import Token
        from rest_framework.test import APIClient

        self.campaign, self.query, self.clients = campaign, "" if progress else "?progress=0", []
        for user in people:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
            self.clients.append(client)

    def post(self, client, path, body=None):
        return client.post(path, body, format="json")

    def cycle(self, i, answers):
        client = self.clients[i % 2]
        lease = self.post(client, f"/api/v1/campaigns/{self.campaign.pk}/next/{self.query}").json()["assignment"]
        done = self.post(client, f"/api/v1/assignments/{lease['id']}/submit/{self.query}",
                         {"client_submission_id": str(uuid.uuid4()), "answers": answers})
        assert done.status_code == 201, done.content


class PageSide(ApiSide):
    """The annotation page's requests: session cookie, X-CSRFToken from the csrftoken cookie the page set, the
    labeller's progress with each submission (annotate.js asks `next` without it)."""

    def __init__(self, campaign, people):
        from django.conf import settings
        from django.test import Client
        from django.utils.crypto import get_random_string

        self.campaign, self.clients = campaign, []
        for user in people:
            client = Client(enforce_csrf_checks=True)
            client.force_login(user)
            # The cookie the page's GET sets (rendering it needs collectstatic's manifest in production mode).
            client.csrf = client.cookies[settings.CSRF_COOKIE_NAME] = get_random_string(32)
            self.clients.append(client)

    def post(self, client, path, body=None):
        return client.post(path, {} if body is None else body, content_type="application/json",
                           HTTP_X_CSRFTOKEN=client.csrf, HTTP_ACCEPT="application/json")

    def cycle(self, i, answers):
        client = self.clients[i % 2]
        lease = self.post(client, f"/api/v1/campaigns/{self.campaign.pk}/next/?progress=0").json()["assignment"]
        done = self.post(client, f"/api/v1/assignments/{lease['id']}/submit/",
                         {"client_submission_id": str(uuid.uuid4()), "answers": answers})
        assert done.status_code == 201, done.content
        assert "left_for_you" in done.json()["progress"]


def database_cpu(connection):
    """CPU seconds (user + system) used so far by the PostgreSQL process serving `connection`; 0.0 where that process
    is not on this machine (or not readable)."""
    import psutil

    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=400, help="cycles per side and round")
    parser.add_argument("--progress", action="store_true", help="the API side asks for the labeller's progress too")
    parser.add_argument("--page", action="store_true", help="also the annotation page's cycle, the sides in turns")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--items", type=int, default=0, help="items per campaign (one batch); default: what the "
                                                             "cycles need")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="print cProfile's N costliest functions")
    parser.add_argument("--database-url", default=os.environ.get("PERF_DATABASE_URL",
                                                                 "postgres://postgres@127.0.0.1:5432/hb_cycle_cost"))
    args = parser.parse_args(argv)
    recreate_database(args.database_url)
    os.environ.update(DATABASE_URL=args.database_url, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0",
                      HB_PRODUCTION="1", HB_HTTPS="0", SECRET_KEY="cycle-cost-only-" + "x" * 40,
                      ALLOWED_HOSTS="testserver")
    try:
        import django
        django.setup()
        from annotator_load import ANSWERS, make_load_campaign
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        call_command("migrate", verbosity=0)
        items = max(args.items, args.cycles * (args.rounds + 1) // 2 + 20)
        sides = {}
        people = [User.objects.create_user(f"ann{i}") for i in range(2)]
        sides["api"] = ApiSide(make_load_campaign("cycle-cost", items, 2, people)[0], people, args.progress)
        if args.page:
            people = [User.objects.create_user(f"page{i}") for i in range(2)]
            sides["page"] = PageSide(make_load_campaign("cycle-cost-page", items, 2, people)[0], people)
        cpu = {side: [] for side in sides}
        db_cpu = {side: [] for side in sides}
        statements = {}
        for name, side in sides.items():
            for i in range(2):  # warm up (the first lease starts the batch)
                side.cycle(i, ANSWERS)
            with CaptureQueriesContext(connection) as queries:
                for i in range(20):
                    side.cycle(i, ANSWERS)
            statements[name] = len(queries.captured_queries) / 20
        wall = {side: [] for side in sides}
        for round_ in range(args.rounds):
            for name, side in sides.items():
                profile = cProfile.Profile(time.process_time) if args.profile and round_ == 0 else None
                backend = database_cpu(connection)
                started, clock = time.process_time(), time.perf_counter()
                if profile:
                    profile.enable()
                for i in range(args.cycles):
                    side.cycle(i, ANSWERS)
                if profile:
                    profile.disable()
                cpu[name].append(time.process_time() - started)
                db_cpu[name].append(database_cpu(connection) - backend)
                wall[name].append(time.perf_counter() - clock)
                if profile:
                    out = io.StringIO()
                    pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(args.profile)
                    print(f"# cProfile, {name} side, {args.cycles} cycles (CPU time, profiler overhead included)\n"
                          + out.getvalue(), file=sys.stderr)
        for name in sides:
            row = {"side": name, "cycles": args.cycles, "rounds": args.rounds,
                   "progress": name == "page" or args.progress, "statements_per_cycle": statements[name],
                   "cpu_ms_per_cycle": round(1000 * statistics.median(cpu[name]) / args.cycles, 2),
                   "db_cpu_ms_per_cycle": round(1000 * statistics.median(db_cpu[name]) / args.cycles, 2),
                   "wall_ms_per_cycle": round(1000 * statistics.median(wall[name]) / args.cycles, 2),
                   "load_avg": [round(x, 2) for x in os.getloadavg()]}
            print(json.dumps(row), flush=True)
        if args.page:
            ratio = statistics.median(cpu["page"]) / statistics.median(cpu["api"])
            api_db = statistics.median(db_cpu["api"])
            db_ratio = round(statistics.median(db_cpu["page"]) / api_db, 2) if api_db else None
            print(json.dumps({"page_over_api_cpu": round(ratio, 2), "page_over_api_db_cpu": db_ratio}), flush=True)
        connection.close()
    finally:
        drop_database(args.database_url)


if __name__ == "__main__":
    main()
