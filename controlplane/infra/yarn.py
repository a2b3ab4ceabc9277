"""A YARN ResourceManager through its REST API (`/ws/v1/cluster`), and the Hadoop client configuration.

Only what supervision needs: the cluster's limits, applications by tag, one application's final
status, and a kill. Every call has a timeout; a ResourceManager that does not answer raises
`ResourceManagerUnreachable`, never a stale or empty answer.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# YARN's states of an application that has not ended.
ALIVE_STATES = ("NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED", "RUNNING")
ENDED_STATES = ("FINISHED", "FAILED", "KILLED")
APPLICATION_ID = re.compile(r"\bapplication_\d+_\d+\b")


class ResourceManagerError(RuntimeError):
    pass


class ResourceManagerUnreachable(ResourceManagerError):
    pass


@dataclass(frozen=True)
class YarnApplication:
    id: str
    name: str
    state: str
    final_status: str
    tags: tuple[str, ...]
    diagnostics: str
    tracking_url: str | None
    am_host: str | None  # the NodeManager running the ApplicationMaster (the driver in cluster mode)
    launched_at: float | None = None  # when its current attempt's ApplicationMaster was launched (epoch s)
    started_at: float | None = None  # when the ResourceManager accepted it (epoch s)
    finished_at: float | None = None  # when it ended (epoch s); None while alive

    @property
    def alive(self) -> bool:
        return self.state in ALIVE_STATES

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> YarnApplication:
        tags = tuple(t for t in (data.get("applicationTags") or "").split(",") if t)
        return cls(id=data["id"], name=data.get("name", ""), state=data.get("state", ""),
                   final_status=data.get("finalStatus", ""), tags=tags, diagnostics=data.get("diagnostics") or "",
                   tracking_url=data.get("trackingUrl") or None, am_host=data.get("amHostHttpAddress") or None,
                   launched_at=(data.get("launchTime") or 0) / 1000 or None,
                   started_at=(data.get("startedTime") or 0) / 1000 or None,
                   finished_at=(data.get("finishedTime") or 0) / 1000 or None)


class ResourceManager:
    def __init__(self, url: str, timeout: float = 10.0, user: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.user = user or os.environ.get("HADOOP_USER_NAME") or _login_name()

    def info(self) -> dict:
        return self._get("/ws/v1/cluster/info")["clusterInfo"]

    def maximum_allocation(self) -> dict:
        """The largest container the scheduler grants: {"memory": MB, "vCores": n}."""
        return self._get("/ws/v1/cluster/metrics")["clusterMetrics"].get("maximumAllocation") or {}

    def nodes(self) -> list[dict]:
        return (self._get("/ws/v1/cluster/nodes").get("nodes") or {}).get("node") or []

    def applications(self, tag: str, states: tuple[str, ...] = ALIVE_STATES) -> list[YarnApplication]:
        """Applications carrying `tag` in any of `states` (YARN keeps tags in lower case)."""
        query = f"applicationTags={tag.lower()}&states={','.join(states)}"
        apps = (self._get(f"/ws/v1/cluster/apps?{query}").get("apps") or {}).get("app") or []
        return [YarnApplication.from_json(app) for app in apps]

    def application(self, application_id: str) -> YarnApplication | None:
        try:
            return YarnApplication.from_json(self._get(f"/ws/v1/cluster/apps/{application_id}")["app"])
        except ResourceManagerError as error:
            if "404" in str(error):
                return None
            raise

    def kill(self, application_id: str) -> None:
        self._request("PUT", f"/ws/v1/cluster/apps/{application_id}/state", {"state": "KILLED"})

    def _get(self, path: str) -> dict:
        return self._request("GET", path)

    def _request(self, method: str, path: str, body: dict | None = None) -> dict:
        separator = "&" if "?" in path else "?"
        url = f"{self.url}{path}{separator}user.name={self.user}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method,  # noqa: S310 - our configured RM
                                         headers={"Accept": "application/json", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                raw = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")[:500]
            raise ResourceManagerError(f"ResourceManager {self.url} answered {error.code} to {method} {path}: "
                                       f"{_remote_message(detail)}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ResourceManagerUnreachable(
                f"the YARN ResourceManager at {self.url} is unreachable: {reason}") from None
        return json.loads(raw) if raw.strip() else {}


def _remote_message(detail: str) -> str:
    try:
        return json.loads(detail)["RemoteException"]["message"]
    except (ValueError, KeyError, TypeError):
        return detail


def _login_name() -> str:
    import getpass

    return getpass.getuser()


# -- the Hadoop client configuration (HADOOP_CONF_DIR) ------------------------------------------


def read_site(conf_dir: str | Path, name: str) -> dict[str, str]:
    """The properties of a Hadoop `*-site.xml` file; {} when the file does not exist."""
    path = Path(conf_dir) / name
    if not path.is_file():
        return {}
    root = ET.parse(path).getroot()  # noqa: S314 - the operator's own configuration
    properties = {}
    for prop in root.iter("property"):
        key, value = prop.findtext("name"), prop.findtext("value")
        if key:
            properties[key.strip()] = (value or "").strip()
    return properties


def resourcemanager_url(conf_dir: str | Path) -> str | None:
    """The ResourceManager's web address from yarn-site.xml, as an http URL."""
    site = read_site(conf_dir, "yarn-site.xml")
    address = site.get("yarn.resourcemanager.webapp.address")
    if not address:
        host = site.get("yarn.resourcemanager.hostname")
        address = f"{host}:8088" if host else None
    return f"http://{address}" if address else None


def default_filesystem(conf_dir: str | Path) -> str | None:
    """fs.defaultFS from core-site.xml (e.g. hdfs://namenode:8020)."""
    return read_site(conf_dir, "core-site.xml").get("fs.defaultFS")
