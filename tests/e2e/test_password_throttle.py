"""The change-password page's old password counts on the account's sign-in throttle (issue 41, item 2): past
the limit of wrong old passwords the page says how long to wait, with an empty form, and checks nothing."""
import pytest

from .conftest import expect, make_user, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_wrong_old_passwords_are_throttled_on_the_change_password_page(page, settings):
    settings.LOGIN_FAILURE_LIMIT = 2
    make_user("nina")
    sign_in(page, "nina")
    for attempt in range(3):
        page.goto("/accounts/password/")
        page.fill("#id_old_password", f"not-my-password-{attempt}")
        page.fill("#id_new_password1", "a-new-pass-phrase-9")
        page.fill("#id_new_password2", "a-new-pass-phrase-9")
        page.click("#change-password-submit")
    expect(page.locator("#password-throttled")).to_contain_text("Too many wrong passwords. Try again in")
    expect(page.locator("#id_old_password")).to_have_value("")
    shot(page, "change-password-throttled", "Change password", "#password-throttled")
