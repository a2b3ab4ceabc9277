"""Configuration pages: clusters, mirrors and import. Forms post to the REST API from the browser.

Pages are rendered with their data (no second round trip); the scripts keep lists live and submit the
forms to `/api/v1/`, whose 400s name the field. Stored secrets never reach a page: the cluster form
only knows whether a password or key is set.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from frontend.views import page, role_required
from frontend.views.policy import override_policy
from mirrorcore import registry
from mirrorcore.filters import DEFAULT_GROUPS, DEFAULT_GROUPS_EXCLUDE, DEFAULT_TOPICS, DEFAULT_TOPICS_EXCLUDE
from mirrors.choices import ConnectorKind, ReplicationPolicy, SaslMechanism, SecurityProtocol
from mirrors.models import Cluster, Connector, Mirror
from mirrors.roles import ADMIN, VIEWER
from mirrors.services.overview import overview as overview_data


@dataclass(frozen=True)
class Setting:
    """A connector property the mirror form shows as its own field: its MM2 name and label; its kind, its
    default (shown as placeholder) and its help come from the property registry."""

    name: str
    label: str

    @property
    def kind(self) -> str:
        """seconds | integer | boolean: how the field takes its value."""
        kind = registry.get(self.name).type
        return "boolean" if kind == "boolean" else "seconds" if kind in ("seconds", "double") else "integer"

    @property
    def default(self) -> str:
        return registry.get(self.name).effective_default or ""

    @property
    def help(self) -> str:
        return registry.get(self.name).doc


CONNECTOR_SETTINGS: dict[str, tuple[Setting, ...]] = {
    ConnectorKind.SOURCE: (
        Setting("refresh.topics.interval.seconds", "Look for new topics every (s)"),
        Setting("sync.topic.configs.enabled", "Sync topic configs"),
        Setting("sync.topic.acls.enabled", "Sync topic ACLs"),
        Setting("replication.factor", "Replication factor of remote topics"),
        Setting("offset.lag.max", "Max offset lag before a sync (records)"),
    ),
    ConnectorKind.CHECKPOINT: (
        Setting("emit.checkpoints.interval.seconds", "Emit checkpoints every (s)"),
        Setting("sync.group.offsets.enabled", "Sync group offsets to the target"),
        Setting("sync.group.offsets.interval.seconds", "Sync group offsets every (s)"),
        Setting("refresh.groups.interval.seconds", "Look for new groups every (s)"),
    ),
    ConnectorKind.HEARTBEAT: (
        Setting("emit.heartbeats.enabled", "Emit heartbeats"),
        Setting("emit.heartbeats.interval.seconds", "Emit heartbeats every (s)"),
        Setting("link.unhealthy.after.seconds", "Link unhealthy after (s)"),
    ),
}
TASKS_MAX_KINDS = (ConnectorKind.SOURCE, ConnectorKind.CHECKPOINT)  # MM2's tasks.max goes to these two
OTHER_EXAMPLES: dict[str, str] = {ConnectorKind.SOURCE: "producer.override.linger.ms=10",
                                  ConnectorKind.CHECKPOINT: "checkpoints.topic.replication.factor=3",
                                  ConnectorKind.HEARTBEAT: "heartbeats.topic.replication.factor=3"}


def properties_text(config: dict[str, str]) -> str:
    """`key=value` lines, as the forms' "other properties" fields show them."""
    return "".join(f"{key}={value}\n" for key, value in sorted(config.items()))


# -- clusters -----------------------------------------------------------------------------------

@role_required(VIEWER)
def cluster_list(request: HttpRequest) -> HttpResponse:
    clusters = Cluster.objects.annotate(mirrors_out=Count("outgoing_mirrors", distinct=True),
                                        mirrors_in=Count("incoming_mirrors", distinct=True))
    return page(request, "frontend/clusters.html", {"nav": "clusters", "clusters": clusters})


@role_required(ADMIN)
def cluster_form(request: HttpRequest, alias: str | None = None) -> HttpResponse:
    cluster = get_object_or_404(Cluster, alias=alias) if alias is not None else None
    form = {
        "alias": cluster.alias if cluster else "",
        "bootstrap_servers": cluster.bootstrap_servers if cluster else "",
        "security_protocol": cluster.security_protocol if cluster else SecurityProtocol.PLAINTEXT,
        "sasl_mechanism": cluster.sasl_mechanism if cluster else "",
        "username": cluster.username if cluster else "",
        "ca_pem": cluster.ca_pem if cluster else "",
        "cert_pem": cluster.cert_pem if cluster else "",
        "config": properties_text(cluster.config) if cluster else "",
        # whether a secret is stored, never the secret
        "has_password": bool(cluster and cluster.password),
        "has_key": bool(cluster and cluster.key_pem),
    }
    return page(request, "frontend/cluster_form.html", {
        "nav": "clusters", "editing": cluster is not None, "form": form, "policy": override_policy(),
        "protocols": SecurityProtocol.values,
        "mechanisms": [m for m in SaslMechanism.values if m],
    })


# -- mirrors ------------------------------------------------------------------------------------

@role_required(VIEWER)
def mirror_list(request: HttpRequest) -> HttpResponse:
    """Rendered from the overview's rows; mirrors.js keeps them live from `GET /api/v1/overview/`."""
    rows = [row | {"cells": [{"kind": kind, **(row["connectors"].get(kind) or {})} for kind in ConnectorKind.values]}
            for row in overview_data()["mirrors"]]
    return page(request, "frontend/mirrors.html", {"nav": "mirrors", "rows": rows})


def _connector_form(kind: str, connector: Connector | None) -> dict:
    config = dict(connector.config) if connector else {}
    settings = [{"setting": s, "value": config.pop(s.name, "")} for s in CONNECTOR_SETTINGS[kind]]
    return {
        "kind": kind,
        "tasks_max": connector.tasks_max if connector else 1,
        "has_tasks_max": kind in TASKS_MAX_KINDS,
        "auto_restart": connector.auto_restart_enabled if connector else True,
        "max_restarts": "" if connector is None or connector.max_restarts is None else connector.max_restarts,
        "settings": settings,
        "other": properties_text(config),
        "placeholder": OTHER_EXAMPLES[kind],
    }


@role_required(ADMIN)
def mirror_form(request: HttpRequest, name: str | None = None) -> HttpResponse:
    mirror = None
    if name is not None:
        mirror = get_object_or_404(Mirror.objects.select_related("source", "target").prefetch_related("connectors"),
                                   name=name)
    connectors = {c.kind: c for c in mirror.connectors.all()} if mirror else {}
    form = {
        "name": mirror.name if mirror else "",
        "source": mirror.source.alias if mirror else "",
        "target": mirror.target.alias if mirror else "",
        "topics": mirror.topics if mirror else DEFAULT_TOPICS,
        "topics_exclude": mirror.topics_exclude if mirror else DEFAULT_TOPICS_EXCLUDE,
        "groups": mirror.groups if mirror else DEFAULT_GROUPS,
        "groups_exclude": mirror.groups_exclude if mirror else DEFAULT_GROUPS_EXCLUDE,
        "replication_policy": mirror.replication_policy if mirror else ReplicationPolicy.DEFAULT,
        "separator": mirror.separator if mirror else ".",
        "connectors": [_connector_form(kind, connectors.get(kind)) for kind in ConnectorKind.values],
        # the other spark resources travel back unchanged with the edited properties
        "spark": (mirror.spark or {}) if mirror else {},
        "spark_conf": properties_text(((mirror.spark or {}).get("conf") or {}) if mirror else {}),
    }
    return page(request, "frontend/mirror_form.html", {
        "nav": "mirrors", "editing": mirror is not None, "form": form, "policy": override_policy(),
        "clusters": Cluster.objects.values_list("alias", flat=True),
        "policies": ReplicationPolicy.choices,
    })


# -- import -------------------------------------------------------------------------------------

@role_required(ADMIN)
def import_page(request: HttpRequest) -> HttpResponse:
    return page(request, "frontend/import.html", {"nav": "import"})
