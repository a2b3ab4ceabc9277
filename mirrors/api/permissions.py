"""The API's permission: authenticated, and a role high enough for the method.

Reads (GET, HEAD, OPTIONS) need `view.read_role` (default viewer); everything else needs
`view.write_role` (default admin). Views with lifecycle verbs set `write_role = "operator"`.
"""

from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

from mirrors.roles import ADMIN, VIEWER, has_role, role_of


def required_role(request, view) -> str:
    if request.method in SAFE_METHODS:
        return getattr(view, "read_role", VIEWER)
    return getattr(view, "write_role", ADMIN)


class RolePermission(BasePermission):
    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False  # DRF answers 401 (NotAuthenticated), not 403
        needed = required_role(request, view)
        if has_role(user, needed):
            return True
        self.message = (f"{request.method} here needs the {needed} role; "
                        f"you have {role_of(user) or 'no role (ask an admin to give you one)'}")
        return False
