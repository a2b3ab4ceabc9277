"""The installation's override policy: what a mirror may pass to Spark and to Kafka clients.

In the spirit of Kafka Connect's `connector.client.config.override.policy`: `none` lets a mirror set
nothing, `allowlist` (the default) the properties listed in `spark_conf` and `client_config` plus those
the installation adds, `all` anything. The values come from the environment of the control plane
(Django settings) and travel to the driver in the application's configuration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

NONE, ALLOWLIST, ALL = "none", "allowlist", "all"
MODES = (NONE, ALLOWLIST, ALL)

# The environment variables that set each part (named in every refusal, so the fix is one line away).
SPARK_CONF_POLICY_ENV = "MIRRORPLANE_SPARK_CONF_POLICY"
SPARK_CONF_ALLOW_ENV = "MIRRORPLANE_SPARK_CONF_ALLOW"
CLIENT_CONFIG_POLICY_ENV = "MIRRORPLANE_CLIENT_CONFIG_POLICY"
CLIENT_CONFIG_ALLOW_ENV = "MIRRORPLANE_CLIENT_CONFIG_ALLOW"
LOGIN_MODULES_ENV = "MIRRORPLANE_KAFKA_LOGIN_MODULES"
OAUTH_URLS_ENV = "MIRRORPLANE_KAFKA_OAUTH_URLS"

# The login modules Mirrorplane itself configures (SASL PLAIN and SCRAM, see mirrorcore.connection).
DEFAULT_LOGIN_MODULES = ("org.apache.kafka.common.security.plain.PlainLoginModule",
                         "org.apache.kafka.common.security.scram.ScramLoginModule")


def split_list(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """`a, b,,c` (or an iterable of strings) as ('a', 'b', 'c')."""
    items = value.split(",") if isinstance(value, str) else (value or ())
    return tuple(item.strip() for item in items if item and item.strip())


def listed(key: str, entries: Iterable[str], *, exact_only: bool = False) -> bool:
    """Whether `key` is one of `entries`: exact names, or prefixes ending in `.` or `*` (`spark.hadoop.fs.s3a.*`).

    `exact_only`: prefixes do not count (keys that run code must be named one by one)."""
    for entry in entries:
        if key == entry:
            return True
        if not exact_only and entry.endswith(("*", ".")) and key.startswith(entry.rstrip("*")):
            return True
    return False


@dataclass(frozen=True)
class OverridePolicy:
    spark_conf: str = ALLOWLIST
    spark_conf_allow: tuple[str, ...] = ()
    client_config: str = ALLOWLIST
    client_config_allow: tuple[str, ...] = ()
    login_modules: tuple[str, ...] = DEFAULT_LOGIN_MODULES
    oauth_urls: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name, env in (("spark_conf", SPARK_CONF_POLICY_ENV), ("client_config", CLIENT_CONFIG_POLICY_ENV)):
            if getattr(self, name) not in MODES:
                raise ValueError(f"{env} must be one of {', '.join(MODES)}, not {getattr(self, name)!r}")
        for name in ("spark_conf_allow", "client_config_allow", "login_modules", "oauth_urls"):
            object.__setattr__(self, name, split_list(getattr(self, name)))

    @classmethod
    def from_environment(cls, env: Mapping[str, str]) -> OverridePolicy:
        """From MIRRORPLANE_* variables; unset ones keep their defaults. ValueError names a bad one."""
        return cls(
            spark_conf=env.get(SPARK_CONF_POLICY_ENV, ALLOWLIST).strip().lower() or ALLOWLIST,
            spark_conf_allow=split_list(env.get(SPARK_CONF_ALLOW_ENV, "")),
            client_config=env.get(CLIENT_CONFIG_POLICY_ENV, ALLOWLIST).strip().lower() or ALLOWLIST,
            client_config_allow=split_list(env.get(CLIENT_CONFIG_ALLOW_ENV, "")),
            login_modules=split_list(env.get(LOGIN_MODULES_ENV, "")) or DEFAULT_LOGIN_MODULES,
            oauth_urls=split_list(env.get(OAUTH_URLS_ENV, "")),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON for the application's configuration file."""
        return {f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> OverridePolicy:
        """From `to_dict`'s output; missing keys (an older control plane) keep the strict defaults."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (data or {}).items() if k in known})
