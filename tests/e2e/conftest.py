"""Headless Chromium (Playwright, sync API) against pytest-django's live server.

The live server runs in a thread of this process and Playwright's sync API keeps an event loop in
this thread; Django would otherwise refuse ORM calls made while a loop is running.
"""
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

# Waits go through locator assertions, never wait_for_function: a string predicate is evaluated
# inside the page, which the site's Content-Security-Policy (no unsafe-eval) rightly refuses.
expect.set_options(timeout=15_000)

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
SHOTS = Path(__file__).resolve().parent / "screenshots"
PASSWORD = "demo-pass-123"
pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        print(f"skipping browser tests: {CHROMIUM} not found")
        pytest.skip(f"{CHROMIUM} not found")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--no-first-run"])
        yield chromium
        chromium.close()


def browser_page(browser, live_server):
    """A page in a browser context of its own (its own cookies: one signed-in person), recording JS errors."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900},
                                  accept_downloads=True)
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    # A blocked script or style shows up only as a console message: count it as an error too.
    page.on("console", lambda message: "Content Security Policy" in message.text and page.errors.append(message.text))
    return page


def close_page(page):
    page.unroute_all(behavior="ignoreErrors")  # a request a test slowed down may still be waiting
    page.context.close()
    assert not page.errors, page.errors  # no uncaught JS error on any page


@pytest.fixture
def page(browser, live_server):
    page = browser_page(browser, live_server)
    yield page
    close_page(page)


@pytest.fixture
def second_page(browser, live_server):
    """A second person's page, beside `page`."""
    page = browser_page(browser, live_server)
    yield page
    close_page(page)


def sign_in(page, username, password=PASSWORD):
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def first_sign_in(page, username, one_time_password, password=PASSWORD):
    """Sign in with a one-time password: the site asks for a new password before anything else, then goes home."""
    sign_in(page, username, one_time_password)
    expect(page).to_have_url(re.compile(r"/accounts/password/$"))
    page.fill("#id_old_password", one_time_password)
    page.fill("#id_new_password1", password)
    page.fill("#id_new_password2", password)
    page.click("#change-password-submit")
    expect(page).to_have_url(re.compile(r"/$"))


WIDTHS = (1366, 800)


def shot(page, name, title, key_selector):
    """Screenshot a page at each of WIDTHS (name-1366.png, name-800.png) after checking, at each width, that
    it is the expected one (its title) with its key element visible, and that the render is not blank.
    The page's own viewport is restored afterwards."""
    assert title in page.title(), page.title()
    SHOTS.mkdir(exist_ok=True)
    viewport = page.viewport_size
    paths = []
    try:
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            key = page.locator(key_selector).first
            expect(key).to_be_visible()
            # Wider than the window means a sideways scroll bar: the page does not fit this width.
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow <= 1, f"{name} is {overflow} px wider than {width} px"
            path = SHOTS / f"{name}-{width}.png"
            page.screenshot(path=str(path), full_page=True)
            assert path.stat().st_size > 8_000, f"{path} looks blank"
            paths.append(path)
    finally:
        page.set_viewport_size(viewport)
    return paths


def keep_shot(page, folder, name):
    """A full-page screenshot kept for reading, in `folder` where that folder exists."""
    if Path(folder).is_dir():
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def make_user(username, researcher=False):
    user = User.objects.create_user(username, password=PASSWORD)
    if researcher:
        user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user
