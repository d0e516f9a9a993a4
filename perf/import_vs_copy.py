"""Import of N generated DiQAD-shaped dialogues versus a bare PostgreSQL COPY of the same rows.

    python perf/import_vs_copy.py [--items 100000] [--database-url postgres://postgres@127.0.0.1:5432/hb_perf]

Both sides write the same rows into the same table on the same server, one after the other.
The import side is the whole `import_items` action: read and parse the file, validate every
field, hash each item, check for existing ids, insert, commit. The COPY side is psql-grade
COPY FROM STDIN of a ready tab-separated file of the final rows. Prints one JSON line.
"""
import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DOMAINS = ["emotion", "digital", "legal", "education", "car", "finance"]
WORDS = ["我们", "你好", "请问", "这个", "问题", "可以", "需要", "已经", "因为", "所以", "但是", "如果", "没有",
         "知道", "时间", "工作", "学习", "汽车", "法律", "财务", "情绪", "数字", "教育", "建议", "考虑", "检查",
         "保险", "合同", "利息", "孩子", "老师", "手机", "电池", "屏幕", "维修", "费用", "申请", "流程", "材料"]


def generate(path, count, seed=7):
    rng = random.Random(seed)
    reasons = {1: ["incomplete", "less_informative", "less_proactive"],
               0: ["not_relevant", "not_empathetic", "grammatical_error"]}
    with open(path, "w", encoding="utf-8") as out:
        for index in range(count):
            turns = [{"speaker": "user" if t % 2 == 0 else "expert",
                      "text": "".join(rng.choice(WORDS) for _ in range(rng.randint(8, 30)))} for t in range(8)]
            label = rng.choice([0, 1, 2])
            record = {"id": f"gen-{index:06d}", "domain": rng.choice(DOMAINS), "dialogue": turns, "label": label,
                      "reasons": rng.sample(reasons[label], 1) if label in reasons else [],
                      "needs_verification": rng.randint(0, 1)}
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


def dump_rows(work, copies):
    """The rows exactly as the import wrote them, as COPY text, plus one empty task per COPY round."""
    from django.db import connection

    from benchmarks.models import Item
    rows_file = work / "rows.tsv"
    table = Item._meta.db_table
    columns = "task_id, external_id, dialogue, fields, meta, source_gold, content_hash, created_at"
    task_ids = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT t.id FROM benchmarks_task t JOIN benchmarks_benchmark b ON b.id = t.benchmark_id "
                       "WHERE b.slug = 'perf-import-0'")
        source_task = cursor.fetchone()[0]
        for number in range(copies):
            cursor.execute("INSERT INTO benchmarks_benchmark (slug, name, language, version, source, licence, "
                           "description, created_at) "
                           "VALUES (%s, 'copy', '', '', '', '', '', now()) RETURNING id", [f"perf-copy-{number}"])
            benchmark_id = cursor.fetchone()[0]
            cursor.execute("INSERT INTO benchmarks_task (benchmark_id, slug, name, dimension, form, instructions, "
                           "source_names) SELECT %s, slug, name, dimension, form, instructions, source_names "
                           "FROM benchmarks_task WHERE id = %s RETURNING id", [benchmark_id, source_task])
            task_ids.append(cursor.fetchone()[0])
        # The dump leaves task_id out; each COPY round fills it from a column DEFAULT set just before.
        with open(rows_file, "wb") as out, cursor.cursor.copy(
                f"COPY (SELECT external_id, dialogue, fields, meta, source_gold, content_hash, created_at "
                f"FROM {table} WHERE task_id = {source_task}) TO STDOUT") as copy:
            for block in copy:
                out.write(block)
    connection.close()
    return rows_file, table, columns, task_ids


def copy_rows(database_url, rows_file, table, columns, task_id, expected):
    """Bare COPY FROM STDIN of the dumped rows into one task; returns seconds."""
    import psycopg
    with psycopg.connect(database_url) as raw:
        raw.execute(f"ALTER TABLE {table} ALTER COLUMN task_id SET DEFAULT {int(task_id)}")
        raw.commit()
        started = time.perf_counter()
        with (raw.cursor() as cursor, open(rows_file, "rb") as source_rows,
              cursor.copy(f"COPY {table} ({columns.replace('task_id, ', '')}) FROM STDIN") as copy):
            while block := source_rows.read(1 << 20):
                copy.write(block)
        raw.commit()
        seconds = time.perf_counter() - started
        raw.execute(f"ALTER TABLE {table} ALTER COLUMN task_id DROP DEFAULT")
        copied = raw.execute(f"SELECT count(*) FROM {table} WHERE task_id = %s", [task_id]).fetchone()[0]
        raw.commit()
    assert copied == expected, (copied, expected)
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="alternate the two sides this many times; best of each")
    parser.add_argument("--database-url", default=os.environ.get("PERF_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/hb_perf"))
    args = parser.parse_args()

    from perf._services import recreate_database
    recreate_database(args.database_url)

    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    django.setup()
    from django.core.management import call_command

    from benchmarks.actions import import_items
    call_command("migrate", verbosity=0)

    work = Path(tempfile.mkdtemp(prefix="hb-perf-"))
    source = work / "diqad.jsonl"
    generate(source, args.items)

    import_times, copy_times = [], []
    for round_number in range(args.repeat):
        started = time.perf_counter()
        summary = import_items(source, "diqad", f"perf-import-{round_number}")
        import_times.append(time.perf_counter() - started)
        assert summary.items_created == args.items
        if round_number == 0:
            rows_file, table, columns, task_ids = dump_rows(work, args.repeat)
        copy_times.append(copy_rows(args.database_url, rows_file, table, columns, task_ids[round_number], args.items))
    import_seconds, copy_seconds = min(import_times), min(copy_times)

    result = {
        "items": args.items,
        "file_mb": round(source.stat().st_size / 1e6, 1),
        "import_seconds": round(import_seconds, 2),
        "copy_seconds": round(copy_seconds, 2),
        "import_items_per_second": round(args.items / import_seconds),
        "ratio_import_over_copy": round(import_seconds / copy_seconds, 2),
        "import_runs": [round(t, 2) for t in import_times],
        "copy_runs": [round(t, 2) for t in copy_times],
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
