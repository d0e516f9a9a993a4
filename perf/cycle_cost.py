"""What one annotator cycle (next + submit through the API) costs inside one Django process: CPU time and SQL
statements, with no HTTP server, no other users and no waiting. CPU time is what a busy shared machine
changes least, so two versions of the code can be compared on it when wall-clock figures are too noisy.

    python perf/cycle_cost.py --cycles 400 [--progress]

Two annotators take turns on a campaign with overlap 2 (so every other submit is an item's last label), through
DRF's test client with token authentication, production settings otherwise. Prints one JSON line.
"""
import argparse
import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "perf"))

from perf._services import drop_database, recreate_database  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=400)
    parser.add_argument("--progress", action="store_true", help="ask for the labeller's progress (the page's way)")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/hb_cycle_cost")
    args = parser.parse_args(argv)
    recreate_database(args.database_url)
    os.environ.update(DATABASE_URL=args.database_url, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0",
                      HB_PRODUCTION="1", HB_HTTPS="0", SECRET_KEY="cycle-cost-only-" + "x" * 40,
                      ALLOWED_HOSTS="testserver")
    try:
        import django
        django.setup()
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from django.db import connection
        from django.test.utils import CaptureQueriesContext
        from rest_framework.authtoken.models import Token
        from rest_framework.test import APIClient

        from annotator_load import ANSWERS, make_load_campaign

        call_command("migrate", verbosity=0)
        people = [User.objects.create_user(f"ann{i}") for i in range(2)]
        campaign, _ = make_load_campaign("cycle-cost", args.cycles // 2 + 20, 2, people)
        clients = []
        for user in people:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
            clients.append(client)
        query = "" if args.progress else "?progress=0"

        def cycle(client):
            lease = client.post(f"/api/v1/campaigns/{campaign.pk}/next/{query}").json()["assignment"]
            done = client.post(f"/api/v1/assignments/{lease['id']}/submit/{query}",
                               {"client_submission_id": str(uuid.uuid4()), "answers": ANSWERS}, format="json")
            assert done.status_code == 201, done.content

        for client in clients:  # warm up (the first lease starts the batch)
            cycle(client)
        with CaptureQueriesContext(connection) as queries:
            for i in range(20):
                cycle(clients[i % 2])
        statements = len(queries.captured_queries) / 20
        cpu, wall = time.process_time(), time.perf_counter()
        for i in range(args.cycles):
            cycle(clients[i % 2])
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        row = {"cycles": args.cycles, "progress": args.progress, "statements_per_cycle": statements,
               "cpu_ms_per_cycle": round(1000 * cpu / args.cycles, 2),
               "wall_ms_per_cycle": round(1000 * wall / args.cycles, 2),
               "load_avg": [round(x, 2) for x in os.getloadavg()]}
        print(json.dumps(row), flush=True)
        connection.close()
    finally:
        drop_database(args.database_url)


if __name__ == "__main__":
    main()
