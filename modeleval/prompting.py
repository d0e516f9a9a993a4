"""What may stand in a prompt template, and a benchmark's language as the prompts name it.

Django-free and torch-free: the mode families (`modeleval.modes`) check their templates with it in
the web process, and register_model checks a model's chat template.
"""
from __future__ import annotations

import string


def check_template(template: str, allowed, what: str = "prompt template") -> None:
    """Refuse a str.format template that could do more than put known fields in place: unknown or
    positional fields, attribute or index access ({dialogue.__class__}, {options[0]}), format specs
    ({dialogue:>2000000000} pads to gigabytes) and conversions (!r, !s, !a). ValueError says which."""
    if not isinstance(template, str):
        raise ValueError(f"{what} must be text")
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as error:
        raise ValueError(f"{what}: {error} (write a literal brace as {{{{ or }}}})") from None
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in allowed:
            raise ValueError(f"{what}: unknown field {{{field}}}; the fields are {sorted(allowed)}")
        if spec or conversion:
            raise ValueError(f"{what}: {{{field}}} may not carry a format spec or conversion "
                             f"({'!' + conversion if conversion else ':' + spec})")


def check_chat_template(text: str) -> None:
    """A model's Jinja chat template must parse in the sandbox the tokenizer renders it in."""
    from jinja2.exceptions import TemplateSyntaxError
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    try:
        ImmutableSandboxedEnvironment().parse(text or "")
    except TemplateSyntaxError as error:
        raise ValueError(f"chat template, line {error.lineno}: {error.message}") from None


def language_of(code: str) -> str:
    code = (code or "").lower()
    return "zh" if code.startswith("zh") else "ko" if code.startswith("ko") else "en"
