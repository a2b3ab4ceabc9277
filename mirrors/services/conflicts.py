"""Mirrors that would write the same remote topic: refused before they exist.

MM2 leaves it to the operator to keep two flows from writing one topic on the same target. Here a
mirror is refused when another mirror into the same target may produce the same remote topic name:
with the default policy (`A.t`) that takes the same source alias and separator; with the identity
and legacy policies (`t`) any source. Whether two topic filters can select the same topic is
decided conservatively: literal names are compared exactly, a literal name against a regex by
matching it, and two regexes by their literal prefixes (`orders.*` and `payments.*` cannot meet;
`.*` meets everything).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mirrors.choices import ReplicationPolicy

_META = re.compile(r"[\\.^$*+?{}\[\]|()]")


@dataclass(frozen=True)
class Flow:
    name: str
    source: str
    target: str
    policy: str
    separator: str
    topics: str
    topics_exclude: str = ""

    @property
    def keeps_names(self) -> bool:
        return self.policy in (ReplicationPolicy.IDENTITY, ReplicationPolicy.LEGACY)


def conflicts(flow: Flow, others: Iterable[Flow]) -> list[str]:
    """Why `flow` may not exist beside `others` (empty when it may)."""
    reasons = []
    for other in others:
        if other.name == flow.name or other.target != flow.target:
            continue
        same_names = (flow.keeps_names and other.keeps_names) or (
            not flow.keeps_names and not other.keeps_names
            and (flow.source, flow.separator) == (other.source, other.separator))
        if not same_names:
            continue
        overlap = overlapping(flow.topics, flow.topics_exclude, other.topics, other.topics_exclude)
        if overlap is not None:
            naming = "the same topic names" if flow.keeps_names else f"'{flow.source}{flow.separator}<topic>'"
            reasons.append(f"mirror {other.name!r} ({other.source} -> {other.target}) may also write {naming} on "
                           f"{flow.target!r} for topics matching {overlap!r}: two mirrors must never write the same "
                           "remote topic; narrow `topics`, or change that mirror instead")
    return reasons


def overlapping(topics_a: str, exclude_a: str, topics_b: str, exclude_b: str) -> str | None:
    """An element of filter A that may select a topic filter B also selects, or None."""
    for a in _elements(topics_a):
        for b in _elements(topics_b):
            if _may_meet(a, b) and not _excluded(a, exclude_b) and not _excluded(b, exclude_a):
                return a if _literal(a) else b if _literal(b) else a
    return None


def _elements(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _literal(pattern: str) -> bool:
    return not _META.search(pattern.replace(r"\.", ""))


def _unescaped(pattern: str) -> str:
    return pattern.replace(r"\.", ".")


def _prefix(pattern: str) -> str:
    """The literal text a regex match must start with."""
    result = []
    index = 0
    while index < len(pattern):
        if pattern.startswith(r"\.", index):
            result.append(".")
            index += 2
            continue
        char = pattern[index]
        if _META.match(char):
            if char in "*?{" and result:
                result.pop()  # the previous character may repeat zero times
            break
        result.append(char)
        index += 1
    return "".join(result)


def _may_meet(a: str, b: str) -> bool:
    if _literal(a) and _literal(b):
        return _unescaped(a) == _unescaped(b)
    if _literal(a):
        return _full_match(b, _unescaped(a))
    if _literal(b):
        return _full_match(a, _unescaped(b))
    prefix_a, prefix_b = _prefix(a), _prefix(b)
    return prefix_a.startswith(prefix_b) or prefix_b.startswith(prefix_a)


def _excluded(pattern: str, exclude: str) -> bool:
    """A literal name that the other filter's exclusions remove."""
    return _literal(pattern) and any(_full_match(e, _unescaped(pattern)) for e in _elements(exclude))


def _full_match(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return True  # invalid patterns are refused elsewhere; here, assume the worst
