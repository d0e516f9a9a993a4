"""Request parsers that refuse, with a 400 and a code, what no endpoint can take: NUL characters and
lone surrogates anywhere in a body, JSON nested deeper than MAX_DEPTH, and JSON that does not parse.

PostgreSQL stores no NUL in text or JSON columns and no text that is not valid UTF-8, so such a value
would fail deep inside a query (a 500); a deeply nested document exhausts Python's recursion while it
is parsed or walked. Refusing them at the door gives every endpoint the same clear 400.
"""
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from core.nesting import MAX_DEPTH


def refused(code, detail):
    return ParseError({"code": code, "detail": detail})


def _text_problem(text):
    if "\x00" in text:
        return refused("nul_character", "NUL characters (\\u0000) are not allowed in request bodies.")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return refused("invalid_unicode", "Lone surrogates (\\ud800-\\udfff) are not allowed in request bodies.")
    return None


def check_body(value):
    """Raise the coded ParseError for the first refused thing in a parsed body (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise refused("too_deep", f"Request bodies may nest at most {MAX_DEPTH} levels deep.")
        if isinstance(value, str):
            if problem := _text_problem(value):
                raise problem
        elif isinstance(value, dict):
            stack.extend((part, depth + 1) for pair in value.items() for part in pair)
        elif isinstance(value, (list, tuple)):
            stack.extend((part, depth + 1) for part in value)
        elif hasattr(value, "lists"):  # QueryDict
            stack.extend((part, depth + 1) for key, values in value.lists() for part in (key, values))


class NulRefusingMixin:
    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        check_body(getattr(data, "data", data))
        return data


class JSONBodyParser(NulRefusingMixin, JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise refused("too_deep", f"Request bodies may nest at most {MAX_DEPTH} levels deep.") from None
        except ParseError as error:
            if isinstance(error.detail, dict):
                raise
            raise refused("malformed_json", str(error.detail)) from None


class FormBodyParser(NulRefusingMixin, FormParser):
    pass


class MultiPartBodyParser(NulRefusingMixin, MultiPartParser):
    pass
