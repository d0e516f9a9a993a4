"""A slot: where one app reads what another provides without importing it.

The apps import in one direction (ARCHITECTURE.md), yet model evaluation trains on annotation's labels and
benchmarks shows campaign members what their roles give them. The app that reads declares what it needs as a
typing.Protocol and holds a Slot of it; the top app (`humanbaseline.apps`) fills the slot when Django starts.
Filling checks the provider against the protocol, method by method and parameter by parameter, so that a renamed
function or parameter stops the start instead of failing on the first call that needs it."""
import inspect
from typing import Generic, TypeVar

T = TypeVar("T")
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _methods(protocol):
    """The protocol's declared calls: its public methods, or `__call__` for a protocol of one function."""
    return [name for name, value in vars(protocol).items()
            if inspect.isfunction(value) and (name == "__call__" or not name.startswith("_"))]


def _misfit(protocol, name, provider):
    """Why `provider` cannot stand for the protocol's method `name`, or None. It takes the declared parameters by
    the same names, kinds and order; more parameters only with defaults (a functools.partial's bound ones)."""
    given = provider if name == "__call__" else getattr(provider, name, None)
    if not callable(given):
        return f"{name}: missing"
    declared = [(p.name, p.kind) for p in list(inspect.signature(getattr(protocol, name)).parameters.values())[1:]]
    names = {p for p, _ in declared}
    taken = [(p.name, p.kind) for p in inspect.signature(given).parameters.values()
             if p.name in names or (p.default is p.empty and p.kind not in _VARIADIC)]
    if taken != declared:
        return f"{name}: declared ({', '.join(p for p, _ in declared)}), given {inspect.signature(given)}"
    return None


class Slot(Generic[T]):
    """Holds the provider of `protocol` once the top app has filled it."""

    def __init__(self, protocol: type[T]):
        self.protocol = protocol
        self._provider = None

    def __repr__(self):
        return f"<Slot of {self.protocol.__module__}.{self.protocol.__qualname__}>"

    def fill(self, provider: T) -> None:
        misfits = [why for name in _methods(self.protocol) if (why := _misfit(self.protocol, name, provider))]
        if misfits:
            raise TypeError(f"{provider!r} does not fit {self!r}: {'; '.join(misfits)}")
        self._provider = provider

    @property
    def filled(self) -> bool:
        return self._provider is not None

    @property
    def provider(self) -> T:
        if self._provider is None:
            raise LookupError(f"{self!r} is empty: the top app (humanbaseline.apps) fills it when Django starts")
        return self._provider
