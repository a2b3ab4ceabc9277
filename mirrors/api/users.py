"""Users and their roles, for admins only: `/api/v1/users/`.

Passwords are write-only; changing one (or deactivating the user) revokes the user's API tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from rest_framework import serializers, status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.request import Request
from rest_framework.response import Response

from mirrors.roles import ADMIN, ROLES, set_role
from mirrors.services import audit
from mirrors.services.events import actor_of

if TYPE_CHECKING:
    from django.contrib.auth.models import User as UserModel  # what get_user_model() returns here

User = get_user_model()


class UserSerializer(serializers.ModelSerializer):
    role = serializers.ChoiceField(choices=ROLES, required=True, allow_null=True,
                                   help_text="viewer < operator < admin; null: no role (refused everywhere)")
    password = serializers.CharField(write_only=True, required=False, trim_whitespace=False, max_length=128,
                                     style={"input_type": "password"},
                                     help_text="write-only; without one on create the user cannot log in")

    class Meta:
        model = User
        fields = ["username", "role", "password", "is_active", "is_superuser", "date_joined", "last_login"]
        read_only_fields = ["is_superuser", "date_joined", "last_login"]

    def get_fields(self):
        fields = super().get_fields()
        if self.instance is not None:
            fields["role"].required = False
        return fields

    def to_representation(self, user) -> dict:
        data = super().to_representation(user)
        data["role"] = _stored_role(user)
        return data

    def validate_username(self, value: str) -> str:
        if self.instance is not None and value != self.instance.username:
            raise serializers.ValidationError("a user cannot be renamed")
        return value

    def validate(self, attrs: dict) -> dict:
        user = self.instance
        if "password" in attrs:
            try:
                password_validation.validate_password(attrs["password"], user)
            except DjangoValidationError as error:
                raise serializers.ValidationError({"password": list(error.messages)}) from None
        if user is not None and user.is_superuser and "role" in attrs and attrs["role"] != ADMIN:
            raise serializers.ValidationError({"role": "a superuser is always an admin"})
        request = self.context.get("request")
        if user is not None and request is not None and user.pk == request.user.pk:
            if attrs.get("is_active") is False:
                raise serializers.ValidationError({"is_active": "you cannot deactivate yourself"})
            if "role" in attrs and attrs["role"] != ADMIN:
                raise serializers.ValidationError({"role": "you cannot take the admin role from yourself"})
        return attrs

    @transaction.atomic
    def create(self, validated_data: dict):
        role = validated_data.pop("role")
        password = validated_data.pop("password", None)
        user = User(**validated_data)
        if password:
            user.set_password(password)
        else:
            user.set_unusable_password()
        user.save()
        set_role(user, role)
        return user

    @transaction.atomic
    def update(self, user, validated_data: dict):
        revoke = False
        if "role" in validated_data:
            set_role(user, validated_data.pop("role"))
        if "password" in validated_data:
            user.set_password(validated_data.pop("password"))
            revoke = True
        if validated_data.get("is_active") is False:
            revoke = True
        for name, value in validated_data.items():
            setattr(user, name, value)
        user.save()
        if revoke:
            Token.objects.filter(user=user).delete()
        return user


def _stored_role(user) -> str | None:
    """The user's role as assigned, also while inactive (when role_of says None: it cannot log in)."""
    if user.is_superuser:
        return ADMIN
    names = [g.name for g in user.groups.all() if g.name in ROLES]
    return max(names, key=ROLES.index) if names else None


class UserViewSet(viewsets.ModelViewSet):
    queryset = User.objects.order_by("username").prefetch_related("groups")
    serializer_class = UserSerializer
    lookup_field = "username"
    lookup_value_regex = r"[\w.@+-]+"
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]
    read_role = ADMIN
    write_role = ADMIN

    def perform_create(self, serializer: serializers.BaseSerializer[UserModel]) -> None:
        user = serializer.save()
        audit.user_created(actor_of(self.request.user), user.username, _stored_role(user) or "")

    def perform_update(self, serializer: serializers.BaseSerializer[UserModel]) -> None:
        before = _stored_role(serializer.instance) or ""
        user = serializer.save()
        audit.user_updated(actor_of(self.request.user), user.username, serializer.validated_data, before,
                           _stored_role(user) or "")

    def destroy(self, request: Request, *args, **kwargs) -> Response:
        user = self.get_object()
        if user.pk == request.user.pk:
            return Response({"detail": "you cannot delete yourself"}, status=status.HTTP_409_CONFLICT)
        user.delete()
        audit.user_deleted(actor_of(request.user), user.username)
        return Response(status=status.HTTP_204_NO_CONTENT)
