"""Kafka's own JVM system properties that restrict SASL login modules and OAuth URLs, for every JVM of
a mirror application (the driver, and executors on a cluster).

Newer Kafka clients read an allowlist of login modules (KIP-1135); older ones (Spark 4.2 ships
kafka-clients 3.9) only a denylist, so both are set: the allowlist to the configured modules, the
denylist to the JDK's and Kafka's other modules. OAuth token and JWKS endpoints are limited to the
configured URLs (none by default). Mirrorplane builds `sasl.jaas.config` itself and the override
policy refuses it everywhere else: these properties are a second line.
"""

from __future__ import annotations

from mirrorcore.overrides.policy import OverridePolicy

ALLOWED_LOGIN_MODULES = "org.apache.kafka.allowed.login.modules"
DISALLOWED_LOGIN_MODULES = "org.apache.kafka.disallowed.login.modules"
ALLOWED_OAUTH_URLS = "org.apache.kafka.sasl.oauthbearer.allowed.urls"

# Login modules a JAAS configuration could name on a JDK 17 with Kafka's clients.
KNOWN_LOGIN_MODULES = (
    "com.sun.security.auth.module.JndiLoginModule",
    "com.sun.security.auth.module.LdapLoginModule",
    "com.sun.security.auth.module.Krb5LoginModule",
    "com.sun.security.auth.module.KeyStoreLoginModule",
    "com.sun.security.auth.module.UnixLoginModule",
    "com.sun.security.auth.module.NTLoginModule",
    "org.apache.kafka.common.security.plain.PlainLoginModule",
    "org.apache.kafka.common.security.scram.ScramLoginModule",
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule",
)


def kafka_system_properties(policy: OverridePolicy) -> list[str]:
    """`-D` options for a JVM running Kafka clients under `policy` (no spaces inside any of them)."""
    denied = [module for module in KNOWN_LOGIN_MODULES if module not in policy.login_modules]
    return [f"-D{ALLOWED_LOGIN_MODULES}={','.join(policy.login_modules)}",
            f"-D{DISALLOWED_LOGIN_MODULES}={','.join(denied)}",
            f"-D{ALLOWED_OAUTH_URLS}={','.join(policy.oauth_urls)}"]


def with_kafka_system_properties(options: str, policy: OverridePolicy) -> str:
    """JVM options with ours last, so that they win over the same property set before them."""
    return " ".join(filter(None, [options.strip(), *kafka_system_properties(policy)]))
