"""Free text for a CSV cell, neutralised against formula injection (OWASP, CSV injection)."""

from __future__ import annotations

from typing import Final

FORMULA_STARTS: Final = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet takes as the start of a formula (OWASP, CSV injection)."""


def spreadsheet_text(text: str) -> str:
    """A free text (a name, a team) for a CSV cell: one that a spreadsheet would run as a formula gets a leading
    single quote, so that it is shown as text (OWASP's advice on CSV injection)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text
