"""Sign-out in the browser: the topbar's form ends the API token unless the box is unticked."""
import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from .conftest import PASSWORD, shot, sign_in


def token_works(live_server, token):
    import requests

    return requests.get(f"{live_server.url}/api/v1/benchmarks/", headers={"Authorization": f"Token {token}"},
                        timeout=30).status_code == 200


def token_of(live_server, username):
    import requests

    return requests.post(f"{live_server.url}/api/v1/auth/token/", json={"username": username, "password": PASSWORD},
                         timeout=30).json()["token"]


@pytest.mark.django_db(transaction=True)
def test_sign_out_ends_the_token_unless_unticked(page, live_server):
    User.objects.create_user("ann", password=PASSWORD)
    token = token_of(live_server, "ann")
    sign_in(page, "ann")
    box = page.get_by_label("and end my API token")
    expect(box).to_be_checked()
    shot(page, "sign-out", "HumanBaseline", ".signout")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/accounts/login/**")
    assert not token_works(live_server, token)

    kept = token_of(live_server, "ann")
    sign_in(page, "ann")
    page.get_by_label("and end my API token").uncheck()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/accounts/login/**")
    assert token_works(live_server, kept)
