"""What a Grafana dashboard asks Prometheus for: the metrics in its PromQL and the labels it relies on.

Reads every panel's (nested panels included) targets and the template variables' queries. For each
query: the selectors of the metrics named with one of the given prefixes (name and label matchers),
and the labels it groups by (`by (...)`), names lines by (`{{label}}` in legendFormat) or takes
values from (`label_values(metric, label)`, a variable's regex `label="(...)"`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

_MATCHER = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_BY = re.compile(r"\bby\s*\(([^)]*)\)")
_LEGEND = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_LABEL_VALUES = re.compile(r"label_values\(\s*(\w+)\s*,\s*(\w+)\s*\)")
_VARIABLE_REGEX = re.compile(r'(\w+)="\(')


@dataclass(frozen=True)
class Selector:
    metric: str
    matchers: tuple[tuple[str, str, str], ...]  # (label, operator, value as PromQL reads it)


@dataclass
class Query:
    where: str  # panel title or variable name
    expr: str
    selectors: list[Selector] = field(default_factory=list)
    labels: set[str] = field(default_factory=set)  # grouped by, named in the legend, read by a variable


def queries(dashboard: dict, prefixes: tuple[str, ...]) -> list[Query]:
    metric = re.compile(r"\b((?:" + "|".join(map(re.escape, prefixes)) + r")[A-Za-z0-9_:]*)\s*(\{[^}]*\})?")
    found = []
    for where, expr, legend, regex in _expressions(dashboard):
        query = Query(where, expr)
        for match in metric.finditer(expr):
            matchers = tuple((label, op, re.sub(r"\\(.)", r"\1", value))
                             for label, op, value in _MATCHER.findall(match.group(2) or ""))
            query.selectors.append(Selector(match.group(1), matchers))
        query.labels |= {label.strip() for group in _BY.findall(expr) for label in group.split(",") if label.strip()}
        query.labels |= set(_LEGEND.findall(legend or "")) | set(_VARIABLE_REGEX.findall(regex or ""))
        query.labels |= {label for _, label in _LABEL_VALUES.findall(expr)}
        if query.selectors:
            found.append(query)
    return found


def _panels(panels: list[dict]) -> Iterator[dict]:
    for panel in panels:
        yield panel
        yield from _panels(panel.get("panels") or [])


def _expressions(dashboard: dict) -> Iterator[tuple[str, str, str | None, str | None]]:
    for panel in _panels(dashboard.get("panels") or []):
        for target in panel.get("targets") or []:
            if target.get("expr"):
                yield panel.get("title", ""), target["expr"], target.get("legendFormat"), None
    for variable in (dashboard.get("templating") or {}).get("list") or []:
        query = variable.get("query")
        expr = query.get("query") if isinstance(query, dict) else query
        if variable.get("type") == "query" and expr:
            yield f"variable {variable['name']}", expr, None, variable.get("regex")


def matches(labels: dict[str, str], selector: Selector, variables: dict[str, str]) -> bool:
    """Whether a sample's labels satisfy the selector's matchers, `$variable`s replaced by their values."""
    for label, op, wanted in selector.matchers:
        for name, value in variables.items():
            wanted = wanted.replace(f"${{{name}}}", value).replace(f"${name}", value)
        have = labels.get(label, "")
        hit = have == wanted if op in {"=", "!="} else re.fullmatch(wanted, have) is not None
        if hit != (op in {"=", "=~"}):
            return False
    return True
