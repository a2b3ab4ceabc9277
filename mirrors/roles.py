"""Who may do what: three roles, each including the one below it.

- viewer: read everything (no stored password or key is ever readable);
- operator: also the lifecycle verbs (pause, resume, stop, restart connectors and tasks);
- admin: also create, edit and delete clusters, mirrors and users; import.

A role is membership of the Django group of that name; a superuser is an admin. An active user
without a role group may log in but is refused (403) everywhere. Inactive users cannot log in.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, Group, User

VIEWER, OPERATOR, ADMIN = "viewer", "operator", "admin"
ROLES = (VIEWER, OPERATOR, ADMIN)  # lowest first
_RANK = {role: rank for rank, role in enumerate(ROLES)}


def role_of(user: User | AnonymousUser | None) -> str | None:
    """The user's highest role, or None (anonymous, inactive, or in no role group)."""
    if user is None or not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return ADMIN
    names = {group.name for group in user.groups.all()} & set(ROLES)
    return max(names, key=_RANK.__getitem__) if names else None


def has_role(user: User | AnonymousUser | None, role: str) -> bool:
    """Whether the user has `role` or a higher one."""
    if role not in _RANK:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    actual = role_of(user)
    return actual is not None and _RANK[actual] >= _RANK[role]


def set_role(user: User, role: str | None) -> None:
    """Make `role` the user's only role group (None: no role). A superuser stays an admin regardless."""
    if role is not None and role not in _RANK:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    user.groups.remove(*Group.objects.filter(name__in=ROLES))
    if role is not None:
        group, _ = Group.objects.get_or_create(name=role)
        user.groups.add(group)
