from mirrorcore.acl_sync import TopicAcl, remote_acls


def acl(topic, operation, permission="ALLOW", principal="User:alice"):
    return TopicAcl(topic, principal, "*", operation, permission)


def test_mm2_acl_rules():
    source = [
        acl("orders", "READ"),
        acl("orders", "ALL", principal="User:bob"),
        acl("orders", "WRITE", principal="User:carol"),
        acl("orders", "READ", "DENY", principal="User:dave"),
        acl("orders", "DESCRIBE", principal="User:erin"),
        acl("other", "READ"),
    ]
    result = remote_acls(source, {"orders"}.__contains__, lambda t: f"east.{t}")
    assert result == {
        acl("east.orders", "READ"),
        acl("east.orders", "READ", principal="User:bob"),  # ALL becomes READ
        acl("east.orders", "READ", "DENY", principal="User:dave"),
        acl("east.orders", "DESCRIBE", principal="User:erin"),
    }
    assert all(a.operation != "WRITE" for a in result)


def test_deny_write_is_kept_allow_write_never():
    result = remote_acls([acl("t", "WRITE", "DENY"), acl("t", "WRITE")], lambda t: True, lambda t: t)
    assert result == {acl("t", "WRITE", "DENY")}
