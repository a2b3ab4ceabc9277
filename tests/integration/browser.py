"""Helpers for the browser tests (fixtures `chromium` and `browse` are in conftest.py)."""

from __future__ import annotations

import os
from pathlib import Path

SCREENSHOTS = os.environ.get("MIRRORPLANE_SCREENSHOTS")  # a folder: the tests save the docs' screenshots there


def screenshot(page, name: str) -> None:
    """Save a screenshot for the docs when MIRRORPLANE_SCREENSHOTS names a folder."""
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SCREENSHOTS) / f"{name}.png"), full_page=True)


def log_in(page, username: str, password: str) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/login/" not in url)


UNNAMED_CONTROLS = """() => Array.from(document.querySelectorAll(
        'button, input:not([type=hidden]), select, textarea, a[href]')).filter(el => {
    const labelled = el.getAttribute('aria-labelledby');
    const name = [el.getAttribute('aria-label'), el.labels && Array.from(el.labels).map(l => l.textContent).join(' '),
                  labelled && (document.getElementById(labelled) || {}).textContent, el.textContent, el.title]
        .filter(Boolean).join(' ').trim();
    return !name && el.offsetParent !== null;
}).map(el => el.outerHTML.slice(0, 120))"""


def unnamed_controls(page) -> list[str]:
    """Visible buttons, links and form fields without an accessible name (label, aria-label or text)."""
    return page.evaluate(UNNAMED_CONTROLS)
