"""Topic ACL sync, as MM2's MirrorSourceConnector does it.

Literal topic ACLs of replicated topics are copied to their remote topics, except that WRITE is
never granted on a remote topic (only the mirror writes there) and ALLOW ALL becomes ALLOW READ.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class TopicAcl:
    topic: str
    principal: str
    host: str
    operation: str  # Kafka's AclOperation name: READ, WRITE, ALL, DESCRIBE, ...
    permission: str  # ALLOW or DENY


def remote_acls(source_acls: list[TopicAcl], should_replicate: Callable[[str], bool],
                remote_topic: Callable[[str], str]) -> set[TopicAcl]:
    result = set()
    for acl in source_acls:
        if not should_replicate(acl.topic) or (acl.permission == "ALLOW" and acl.operation == "WRITE"):
            continue
        operation = "READ" if (acl.permission == "ALLOW" and acl.operation == "ALL") else acl.operation
        result.add(TopicAcl(remote_topic(acl.topic), acl.principal, acl.host, operation, acl.permission))
    return result
