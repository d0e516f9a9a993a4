"""The local mode (bin/run, no environment) serves no debug pages: issue 18, finding 16."""
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def test_the_local_mode_does_not_debug(tmp_path):
    """No environment at all (what bin/run gets): DEBUG is off, so no debug page on 127.0.0.1."""
    env = {"HB_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    code = ("import django, os; os.environ['DJANGO_SETTINGS_MODULE']='config.settings'; django.setup(); "
            "from django.conf import settings as s; print(s.DEBUG)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.django_db
def test_unknown_url_shows_no_url_list(client):
    page = client.get("/api/v1/no-such-endpoint/").content.decode()
    assert "URLconf" not in page and "api/v1/benchmarks" not in page and 'id="not-found"' in page
