"""The engine's error hierarchy.

Every error the engine raises is an :class:`EngineError`, itself a :class:`ValueError`, so that callers can catch
bad input in one place and the web layer can map each kind to one HTTP status.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base class of every error the rules engine raises."""


class NotationError(EngineError):
    """A point, move or token could not be read (e.g. ``"p16"`` or ``"h0"``)."""


class UnknownNameError(EngineError):
    """A rule set or opening protocol name that is not registered."""


class IllegalActionError(EngineError):
    """An action that the rules do not allow in the current state; the state is left unchanged.

    ``article`` names the rule the action breaks when there is one (e.g. ``"9.4"``).
    """

    def __init__(self, why: str, article: str | None = None) -> None:
        self.why = why
        self.article = article
        super().__init__(f"{why} (art. {article})" if article else why)


class GameOverError(IllegalActionError):
    """An action after the game has ended."""


class RecordError(EngineError):
    """A game record (plain list, RIF, PSQ) that cannot be read or written."""
