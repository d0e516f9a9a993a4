from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response
from rest_framework.settings import api_settings

from annotation.accounts import must_change_password

from .throttling import guard
from .tokens import issue_token


def _refused(code, detail, status_code=status.HTTP_400_BAD_REQUEST):
    return Response({"code": code, "detail": detail}, status=status_code)


@extend_schema(tags=["auth"], description="Exchange a username and password for an API token (it expires after "
                                          "API_TOKEN_DAYS and when the password changes). Sign-in attempts share "
                                          "the site's throttle: repeated failures are refused with 429.")
class ThrottledObtainAuthToken(ObtainAuthToken):
    # The project's parsers (ObtainAuthToken names DRF's own): NUL, lone surrogates, deep nesting refused.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES

    def post(self, request, *args, **kwargs):
        data = request.data
        if not hasattr(data, "get") or not all(isinstance(data.get(key, ""), str) for key in ("username", "password")):
            return _refused("invalid_body", 'Send an object {"username": "...", "password": "..."} of two strings.')
        serializer = self.get_serializer(data=data)

        def attempt():
            if not serializer.is_valid():
                return _refused("invalid_credentials", "Unable to sign in with the given username and password."), False
            user = serializer.validated_data["user"]
            if must_change_password(user):
                # The password is right, but someone else chose it: no token until the person chose their own.
                return _refused("password_change_required", "Your password was set by someone else: sign in on the "
                                "site and choose your own (Change password) before asking for a token.",
                                status.HTTP_403_FORBIDDEN), True
            return Response({"token": issue_token(user).key}), True

        return guard(request, data.get("username", ""), attempt,
                     lambda wait: _refused("throttled", f"Too many failed attempts; try again in {wait} seconds.",
                                           status.HTTP_429_TOO_MANY_REQUESTS))
