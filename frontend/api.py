from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.response import Response

from .throttling import clear_failures, client_address, record_failure, seconds_blocked


@extend_schema(tags=["auth"], description="Exchange a username and password for an API token. "
                                          "Repeated failures for one username and address are refused with 429.")
class ThrottledObtainAuthToken(ObtainAuthToken):
    def post(self, request, *args, **kwargs):
        username, address = str(request.data.get("username", "")), client_address(request)
        wait = seconds_blocked(username, address)
        if wait:
            return Response({"code": "throttled", "detail": f"Too many failed attempts; try again in {wait} seconds."},
                            status=status.HTTP_429_TOO_MANY_REQUESTS, headers={"Retry-After": str(wait)})
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            record_failure(username, address)
            return Response({"code": "invalid_credentials", "detail": "Unable to sign in with the given username and password."},
                            status=status.HTTP_400_BAD_REQUEST)
        user = serializer.validated_data["user"]
        clear_failures(username, address)
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
