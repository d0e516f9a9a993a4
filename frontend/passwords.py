"""One-time passwords: a person signed in with a password someone else chose (a new account, a manager's reset)
goes to the change-password page before anything else, and every signed-in person may change theirs there.

Whether the person must change it is read once, at sign-in, into the session (`MUST_CHANGE`), so that pages
cost no query for it; the password change that lifts it ends every other session of the person (Django keeps
a hash of the password in each session)."""
from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordChangeForm
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver
from django.http import JsonResponse
from django.shortcuts import redirect
from django.urls import reverse, reverse_lazy

from annotation import accounts

from .throttling import guard

MUST_CHANGE = "must_change_password"
CODE = "password_change_required"
DETAIL = "Your password was set by someone else: choose your own on the Change password page before going on."


@receiver(user_logged_in, dispatch_uid="one-time-password-at-sign-in")
def note_one_time_password(sender, request, user, **kwargs):
    if request is not None and hasattr(request, "session"):
        if accounts.must_change_password(user):
            request.session[MUST_CHANGE] = True
        else:
            request.session.pop(MUST_CHANGE, None)


class PasswordChangeRequiredMiddleware:
    """While the session says the password must be changed, every page sends the person to the change-password
    page (sign-out still works, and what that page itself needs: its scripts' catalog, the language switcher) and the
    API answers 403 `{"code": "password_change_required"}`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.session.get(MUST_CHANGE) and request.user.is_authenticated and not self.open(request.path):
            if request.path.startswith("/api/"):
                return JsonResponse({"code": CODE, "detail": DETAIL}, status=403)
            return redirect("password-change")
        return self.get_response(request)

    @staticmethod
    def open(path):
        return path in (reverse("password-change"), reverse("logout"), reverse("login"), reverse("javascript-catalog"),
                        reverse("set_language")) or \
            path.startswith("/" + settings.STATIC_URL.lstrip("/"))


class NewPasswordForm(PasswordChangeForm):
    """Django's form (the validators included), refusing the password being replaced as the new one."""

    def clean(self):
        data = super().clean()
        if data.get("old_password") and data.get("old_password") == data.get("new_password2"):
            self.add_error("new_password2", "Choose a password other than the one you have now.")
        return data


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's change-password page (the old password, the new one twice, checked by AUTH_PASSWORD_VALIDATORS) for
    every signed-in person; it keeps this session signed in and ends the others."""

    template_name = "frontend/password_change.html"
    form_class = NewPasswordForm
    success_url = reverse_lazy("home")

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "forced": bool(self.request.session.get(MUST_CHANGE))}

    def post(self, request, *args, **kwargs):
        """The old password is a sign-in's password: its check counts on the account's sign-in throttle
        (frontend/throttling.py), a wrong one as a failure, and is refused unchecked past the limit."""

        def attempt():
            response = super(PasswordChangeView, self).post(request, *args, **kwargs)
            form = getattr(self, "checked_form", None)
            return response, form is not None and "old_password" not in form.errors

        def refuse(wait):
            # An empty form: showing the one sent would check its old password after all.
            form = self.get_form_class()(user=request.user)
            return self.render_to_response(self.get_context_data(form=form, throttled_seconds=wait))

        return guard(request, request.user.get_username(), attempt, refuse)

    def get_form(self, form_class=None):
        self.checked_form = super().get_form(form_class)
        return self.checked_form

    def form_valid(self, form):
        response = super().form_valid(form)
        accounts.password_changed(self.request.user)
        self.request.session.pop(MUST_CHANGE, None)
        return response
