"""Comma-separated lists of names or regular expressions, as MM2's filters and exclusion lists take them."""

from __future__ import annotations

import re


class PatternError(ValueError):
    """An invalid pattern list; `pattern` is the offending element."""

    def __init__(self, pattern: str, reason: str) -> None:
        super().__init__(f"invalid regular expression {pattern!r}: {reason}")
        self.pattern = pattern


def compile_patterns(value: str) -> re.Pattern[str] | None:
    """One pattern matching any element of the list, or None for an empty list.

    Raises PatternError naming the first element that is not a valid regular expression.
    """
    elements = [element.strip() for element in value.split(",") if element.strip()]
    if not elements:
        return None
    for element in elements:
        try:
            re.compile(element)
        except re.error as error:
            raise PatternError(element, str(error)) from None
    return re.compile("|".join(f"(?:{element})" for element in elements))
