"""Request parsers that refuse NUL characters anywhere in a body.

PostgreSQL stores no NUL in text or JSON columns, so such a value would fail deep inside a query
(a 500); refusing it at the door gives every endpoint the same clear 400.
"""
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser


def _contains_nul(value):
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_contains_nul(v) for v in value)
    if hasattr(value, "lists"):  # QueryDict
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.lists())
    return False


class NulRefusingMixin:
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        if _contains_nul(getattr(data, "data", data)):
            raise ParseError("NUL characters (\\u0000) are not allowed in request bodies.")
        return data


class JSONBodyParser(NulRefusingMixin, JSONParser):
    pass


class FormBodyParser(NulRefusingMixin, FormParser):
    pass


class MultiPartBodyParser(NulRefusingMixin, MultiPartParser):
    pass
