"""What the benchmarks start and tear down on this machine: scratch PostgreSQL databases and server
processes in their own process groups."""

import os
import signal
import subprocess


def admin_sql(database_url, sql):
    """Run `sql` on the `postgres` database of the server that `database_url` points at (autocommit)."""
    import psycopg

    admin_url = database_url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(sql)


def drop_database(database_url):
    admin_sql(database_url, f'DROP DATABASE IF EXISTS "{database_url.rsplit("/", 1)[1]}" WITH (FORCE)')


def recreate_database(database_url):
    """An empty database at `database_url`, whatever was there before."""
    drop_database(database_url)
    admin_sql(database_url, f'CREATE DATABASE "{database_url.rsplit("/", 1)[1]}"')


def stop_process_group(proc, timeout=30):
    """SIGTERM the process group that `proc` leads; SIGKILL it when it has not ended after `timeout` s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
