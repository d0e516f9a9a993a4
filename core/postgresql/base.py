"""Django's PostgreSQL backend with a health check that costs no round trip while the connection is healthy.

Django checks a persistent connection at the start of each request with `SELECT 1` (CONN_HEALTH_CHECKS): one
round trip per request, on the annotator cycle a tenth of the statements. A server that ends a connection (a
restart, `pg_terminate_backend`, a crash) writes its goodbye or closes the socket, so an idle connection it has
ended has bytes or EOF waiting to be read, and a live idle one has none. Only then is `SELECT 1` sent.

It also gives core.sql's statements (the annotator cycle's) a cursor that binds their parameters on the server.
Django's own cursor writes the parameters into the text, so PostgreSQL parses and plans every statement each
time; bound on the server, a statement that a connection has run `prepare_threshold` times (settings.py) is
prepared and from then on only executed."""
import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresDatabaseWrapper
from django.db.backends.postgresql.base import ServerBindingCursor


def _socket_has_news(conn):
    """Whether something waits to be read on an idle connection's socket: the server's goodbye, EOF, or a notice."""
    try:
        fd = conn.fileno()
    except Exception:  # closed or broken: its driver no longer has a socket
        return True
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN | select.POLLPRI)
        return bool(poller.poll(0))
    readable, _, _ = select.select([fd], [], [], 0)
    return bool(readable)


class DatabaseWrapper(PostgresDatabaseWrapper):
    def close_if_health_check_failed(self):
        if self.connection is None or not self.health_check_enabled or self.health_check_done:
            return
        if (self.connection.closed or _socket_has_news(self.connection)) and not self.is_usable():
            self.close()
        self.health_check_done = True

    _bind_on_server = False

    def bound_cursor(self):
        """A cursor as connection.cursor() gives (Django's wrappers: errors, query logging), whose statements are
        bound on the server. For statements written for it: ORM statements are not all valid that way."""
        self._bind_on_server = True
        try:
            return self.cursor()
        finally:
            self._bind_on_server = False

    def create_cursor(self, name=None):
        if name or not self._bind_on_server:
            return super().create_cursor(name)
        factory, self.connection.cursor_factory = self.connection.cursor_factory, ServerBindingCursor
        try:
            return super().create_cursor(name)
        finally:
            self.connection.cursor_factory = factory
