"""The installation's override policy (mirrorcore.overrides) from Django settings, applied to a stored mirror."""

from __future__ import annotations

from django.conf import settings

from mirrorcore.overrides import OverridePolicy, refusals
from mirrors.models import Mirror


def installation_policy() -> OverridePolicy:
    """The policy the settings describe (read on each call, so tests can override settings)."""
    return OverridePolicy(
        spark_conf=settings.SPARK_CONF_POLICY, spark_conf_allow=settings.SPARK_CONF_ALLOW,
        client_config=settings.CLIENT_CONFIG_POLICY, client_config_allow=settings.CLIENT_CONFIG_ALLOW,
        login_modules=settings.KAFKA_LOGIN_MODULES, oauth_urls=settings.KAFKA_OAUTH_URLS)


def mirror_refusals(mirror: Mirror) -> list[str]:
    """What the policy refuses in a stored mirror, its clusters and connectors (empty: it may run)."""
    return refusals((mirror.spark or {}).get("conf") or {},
                    {mirror.source.alias: mirror.source.config or {}, mirror.target.alias: mirror.target.config or {}},
                    {c.kind: c.config or {} for c in mirror.connectors.all()}, installation_policy())
