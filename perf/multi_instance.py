"""One web instance against two, behind one address: simulated annotators label a campaign through a round-robin
TCP proxy in front of one gunicorn instance or of two (separate processes, each with its own data folder as on its
own host), on one PostgreSQL database and one Redis (broker and cache).

    python perf/multi_instance.py --users 256 --items 1024 --k 2 --repeat 3

Each instance is gunicorn with deploy/gunicorn.conf.py (production settings, --workers x --threads). Both sides go
through the proxy (perf/_services.py, a process of its own), so the proxy's cost is on both. Closed loop: the
annotators (half on the API's cycle, half on the page's, as tests/reliability/test_multi_instance.py) lease and
submit with no think time until the campaign's work runs out, each level on a fresh campaign of --items items at
overlap --k. With --repeat R the sides take turns (1, 2, then 2, 1, ...). Per run one JSON line, then a table:
cycles per second, p50/p99 of a cycle, 5xx answers, over-assigned items (more labels than the overlap), items one
person labelled twice, labels against cycles acknowledged, and the connections each instance was given. On one
machine two instances share its cores with the database and the annotators: the figures show that two instances
are correct and what they cost or gain here, not what two hosts would give.
"""
import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from perf._services import RoundRobinProxy, recreate_database, release_database  # noqa: E402
from perf.annotator_load import (  # noqa: E402
    Gunicorn,
    HumanBaselineClient,
    drive,
    label_counts,
    load_average,
    make_load_campaign,
    server_env,
)


def run(args):
    recreate_database(args.database_url)
    os.environ.update(DATABASE_URL=args.database_url, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="0")
    os.environ.pop("CELERY_TASK_ALWAYS_EAGER", None)
    workdir = ROOT / "perf" / "out" / "multi_instance"
    workdir.mkdir(parents=True, exist_ok=True)
    instances, rows = [], []
    try:
        import django
        django.setup()
        from django.contrib.auth.models import User
        from django.core.management import call_command
        from django.db import connections
        from rest_framework.authtoken.models import Token

        call_command("migrate", verbosity=0)
        people = [User.objects.create_user(f"ann{i:03d}") for i in range(args.users)]
        tokens = [Token.objects.create(user=u).key for u in people]
        shared = {"CELERY_BROKER_URL": args.redis_url, "CACHE_URL": args.redis_url}
        for name in "ab":
            (workdir / name).mkdir(exist_ok=True)
            env = server_env(args.database_url, HB_DATA_DIR=str(workdir / name), **shared)
            instances.append(Gunicorn(env, workdir / f"gunicorn-{name}.log", workers=args.workers,
                                      threads=args.threads))
        print(f"# {args.users} annotators, {args.items} items at k {args.k}; each instance gunicorn {args.workers} "
              f"workers x {args.threads} threads; PostgreSQL {args.database_url.rsplit('/', 1)[1]}", flush=True)
        for round_no in range(1, args.repeat + 1):
            sides = args.instances if round_no % 2 else args.instances[::-1]
            for count in sides:
                campaign, _ = make_load_campaign(f"multi-{count}-{round_no}", args.items, args.k, people,
                                                 batch_size=max(8, args.items // 8), start=True)
                connections.close_all()
                proxy = RoundRobinProxy([f"127.0.0.1:{i.port}" for i in instances[:count]], workdir)
                clients = [HumanBaselineClient(proxy.base, token, campaign.pk, progress=n % 2 == 1)
                           for n, token in enumerate(tokens)]
                before = load_average()
                result = drive(clients, max_seconds=args.max_seconds, max_cycles=args.items * args.k * 2)
                given = proxy.stop()
                over, twice, labels = label_counts(campaign)
                row = result.summary(instances=count, round=round_no, over_assigned=over, same_person_twice=twice,
                                     labels=labels, expected_labels=args.items * args.k,
                                     connections_per_instance=given, load_before=before, load_after=load_average())
                rows.append(row)
                print(json.dumps(row), flush=True)
    finally:
        for instance in instances:
            instance.stop()
        release_database(args.database_url, keep=args.keep_db)
    return rows


def table(rows):
    lines = ["| instances | round | cycles | cycles/s | p50 ms | p99 ms | 5xx | failures | over-assigned | twice "
             "| labels / expected | connections per instance | load avg before/after |", "|---" * 13 + "|"]
    for r in rows:
        lines.append(f"| {r['instances']} | {r['round']} | {r['cycles']} | {r['cycles_per_s']} | {r['p50_ms']} | "
                     f"{r['p99_ms']} | {r['5xx']} | {r['failures']} | {r['over_assigned']} | "
                     f"{r['same_person_twice']} | {r['labels']} / {r['expected_labels']} | "
                     f"{r['connections_per_instance']} | {r['load_before']} / {r['load_after']} |")
    return "\n".join(lines)


def medians(rows):
    """Per instance count: the median cycles/s, p50 and p99 over the rounds."""
    out = {}
    for count in sorted({r["instances"] for r in rows}):
        mine = [r for r in rows if r["instances"] == count]
        out[count] = {key: statistics.median(r[key] for r in mine) for key in ("cycles_per_s", "p50_ms", "p99_ms")}
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    numbers = lambda text: [int(x) for x in text.split(",") if x]  # noqa: E731
    parser.add_argument("--users", type=int, default=256)
    parser.add_argument("--items", type=int, default=1024)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--instances", type=numbers, default=[1, 2], help="instance counts compared (1 or 2)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds, the sides taking turns")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per instance")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--max-seconds", type=float, default=300.0, help="wall-clock cap per run")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/hb_multi_instance")
    parser.add_argument("--redis-url", default=os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0"),
                        help="broker and cache of every instance")
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args(argv)
    if not set(args.instances) <= {1, 2}:
        parser.error("--instances takes 1 and/or 2")
    rows = run(args)
    print()
    print(table(rows))
    print()
    for count, figures in medians(rows).items():
        print(f"{count} instance(s), median over rounds: {figures}")
    return rows


if __name__ == "__main__":
    main()
