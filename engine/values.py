"""Fast copies of the engine's immutable state values.

``dataclasses.replace`` re-runs ``__init__`` with every field and costs microseconds on wide records; the live
adjudicator updates its state on every event, so it uses :func:`evolve`, which copies the slots directly through a
small function generated once per class.  Only for frozen, slotted dataclasses whose ``__post_init__`` (if any)
validates nothing that the change could break.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_COPIERS: dict[type, Callable[[Any, dict[str, Any]], Any]] = {}
_MISSING = object()


def _copier(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    names = [field.name for field in dataclasses.fields(cls)]
    lines = ["def copy(value, changes):", "    new = new_object(cls)", "    get = changes.get"]
    for name in names:
        lines.append(f"    v = get({name!r}, missing)")
        lines.append(f"    set_slot(new, {name!r}, value.{name} if v is missing else v)")
    lines.append("    if not changes.keys() <= names:")
    lines.append("        raise TypeError(f'{cls.__name__} has no field ' + ', '.join(sorted(set(changes) - names)))")
    lines.append("    return new")
    scope: dict[str, Any] = {
        "new_object": object.__new__,
        "set_slot": object.__setattr__,
        "cls": cls,
        "missing": _MISSING,
        "names": frozenset(names),
    }
    exec("\n".join(lines), scope)
    copier: Callable[[Any, dict[str, Any]], Any] = scope["copy"]
    return copier


def evolve(value: T, **changes: Any) -> T:
    """A copy of ``value`` with ``changes`` applied."""
    cls = type(value)
    copier = _COPIERS.get(cls)
    if copier is None:
        copier = _COPIERS[cls] = _copier(cls)
    result: T = copier(value, changes)
    return result
