"""The site's own 404 and 500 pages in a real browser, at a desktop and a narrow width."""
import pytest

from .conftest import make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_404_and_500_pages(page, monkeypatch):
    make_user("someone")
    sign_in(page, "someone")
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 700})
        response = page.goto("/no-such-page/")
        assert response.status == 404 and "someone" in page.text_content(".topbar")
        shot(page, f"404-{width}", "Page not found", "#not-found")

    def broken(*args, **kwargs):
        raise RuntimeError("a crash")

    monkeypatch.setattr("annotation.policy.visible_campaigns", broken)
    for width in (1366, 800):
        page.set_viewport_size({"width": width, "height": 700})
        response = page.goto("/")
        assert response.status == 500 and "a crash" not in page.content()
        shot(page, f"500-{width}", "Server error", "#server-error")
