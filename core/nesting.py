"""How deep a parsed JSON value may nest, for request bodies (config.parsers) and imported files
(benchmarks.importers): no dialogue, form or answer needs more, and a deeper one exhausts Python's
recursion wherever it is walked, encoded or stored."""

MAX_DEPTH = 64


def deeper_than(value, limit: int = MAX_DEPTH) -> bool:
    """Whether lists and objects in `value` nest more than `limit` levels (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(value, dict):
            stack.extend((part, depth + 1) for part in value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend((part, depth + 1) for part in value)
    return False
