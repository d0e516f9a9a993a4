import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()
# The URLconf imports every view module on first use (0.6 s here, the report's plotting among them): done as
# the worker starts, not inside the first request it serves, which would wait that long after every start and
# every recycle (gunicorn's max_requests).
get_resolver().url_patterns  # noqa: B018 -- read for its side effect: the import
