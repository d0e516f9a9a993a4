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


def release_database(database_url, keep=False):
    """Close this process's connections (Django's, where it is set up), then drop the database unless `keep`."""
    try:
        from django.db import connections
        connections.close_all()
    except Exception:  # noqa: BLE001 (Django may not be set up)
        pass
    if not keep:
        drop_database(database_url)


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


# ---------------------------------------------------------------- one address in front of several servers

class RoundRobinProxy:
    """One loopback address in front of several web servers, as a load balancer on its own host is: each new
    connection goes to the next server in turn and its bytes are copied both ways. It runs in its own process
    (`python perf/_services.py proxy`), so that it takes no time from the simulated annotators' interpreter.
    stop() returns how many connections each server was given."""

    def __init__(self, backends, folder):
        import sys
        import time
        from pathlib import Path

        folder = Path(folder)
        self.port_file, self.counts_file = folder / "proxy.port", folder / "proxy.counts"
        for stale in (self.port_file, self.counts_file):  # a previous proxy's, in the same folder
            stale.unlink(missing_ok=True)
        self.log = open(folder / "proxy.log", "w")  # noqa: SIM115 -- the proxy writes it until stop() closes it
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "proxy", str(self.port_file), str(self.counts_file), *backends],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 30
        while not self.port_file.is_file():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the proxy did not start:\n{(folder / 'proxy.log').read_text()[-2000:]}")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())
        self.base = f"http://127.0.0.1:{self.port}"

    def stop(self):
        import json

        stop_process_group(self.proc)
        self.log.close()
        return json.loads(self.counts_file.read_text()) if self.counts_file.is_file() else None


def serve_round_robin(port_file, counts_file, backends):
    """The proxy's process: listen on a free loopback port (written to port_file), hand connections to
    `backends` ("host:port") in turn; on SIGTERM write the connections each was given to counts_file."""
    import asyncio
    import json
    from pathlib import Path

    targets = [(b.rsplit(":", 1)[0], int(b.rsplit(":", 1)[1])) for b in backends]
    given = [0] * len(targets)

    async def pipe(reader, writer):
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except OSError:
            pass
        finally:
            writer.close()

    async def accept(reader, writer):
        n = sum(given) % len(targets)
        given[n] += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*targets[n])
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    async def main():
        server = await asyncio.start_server(accept, "127.0.0.1", 0, backlog=4096)
        stopped = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
        written = Path(f"{port_file}.part")  # renamed once whole, so that the port is never read half-written
        written.write_text(str(server.sockets[0].getsockname()[1]))
        written.rename(port_file)
        await stopped.wait()
        Path(counts_file).write_text(json.dumps(given))

    asyncio.run(main())


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["proxy"]:
        serve_round_robin(sys.argv[2], sys.argv[3], sys.argv[4:])
