"""The Redis conversation between the control plane and a running mirror application.

The control plane writes the desired state (`desired` key); the application writes what it
observes (`status` key, with a time-to-live so a dead application's status expires). JSON on
both keys; both sides import these names from here.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

STATUS_TTL_SECONDS = 30

# Kafka Connect's connector and task states.
UNASSIGNED = "UNASSIGNED"
RUNNING = "RUNNING"
PAUSED = "PAUSED"
STOPPED = "STOPPED"
FAILED = "FAILED"
RESTARTING = "RESTARTING"


def desired_key(mirror: str) -> str:
    return f"mirrorplane:mirror:{mirror}:desired"


def status_key(mirror: str) -> str:
    return f"mirrorplane:mirror:{mirror}:status"


@dataclass
class ConnectorDesired:
    state: str = "running"  # running | paused | stopped
    restart: int = 0  # a new value asks the application to restart the connector


@dataclass
class Desired:
    generation: int
    connectors: dict[str, ConnectorDesired] = field(default_factory=dict)
    # The application the control plane keeps (a YARN application id); None when it does not say.
    application: str | None = None

    def to_json(self) -> str:
        return json.dumps({
            "generation": self.generation,
            "connectors": {k: {"state": c.state, "restart": c.restart} for k, c in self.connectors.items()},
            "application": self.application,
        })

    @classmethod
    def from_json(cls, raw: str | bytes) -> Desired:
        data = json.loads(raw)
        return cls(
            generation=int(data["generation"]),
            connectors={k: ConnectorDesired(**v) for k, v in data.get("connectors", {}).items()},
            application=data.get("application") or None,
        )


def publish_status(client: Any, mirror: str, status: dict[str, Any]) -> None:
    status = status | {"reported_at": time.time()}
    client.set(status_key(mirror), json.dumps(status), ex=STATUS_TTL_SECONDS)


def read_status(client: Any, mirror: str) -> dict[str, Any] | None:
    raw = client.get(status_key(mirror))
    status: dict[str, Any] | None = json.loads(raw) if raw else None
    return status


def publish_desired(client: Any, mirror: str, desired: Desired) -> None:
    client.set(desired_key(mirror), desired.to_json())


def read_desired(client: Any, mirror: str) -> Desired | None:
    raw = client.get(desired_key(mirror))
    return Desired.from_json(raw) if raw else None
