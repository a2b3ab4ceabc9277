"""`manage.py createuser NAME --role viewer|operator|admin [--password P]`: a user of the dashboard and API.

An existing user gets the role (and the password, if given). Without --password: asked for on a
terminal, else (scripts) read from MIRRORPLANE_USER_PASSWORD, else a random one is printed once.
Changing a password revokes the user's API tokens.
"""

from __future__ import annotations

import getpass
import os
import secrets
import sys

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from rest_framework.authtoken.models import Token

from mirrors.roles import ADMIN, ROLES, set_role


class Command(BaseCommand):
    help = "Create a user with a role (viewer, operator, admin), or change an existing user's role and password."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=ROLES)
        parser.add_argument("--password", help="visible in the process list: prefer the prompt or "
                                               "MIRRORPLANE_USER_PASSWORD")
        parser.add_argument("--token", action="store_true", help="also print an API token for the user")

    def handle(self, *args, username: str, role: str, password: str | None, token: bool, **options):
        users = get_user_model()
        existing = users.objects.filter(username=username).first()
        created = existing is None
        user = users(username=username) if existing is None else existing
        if user.is_superuser and role != ADMIN:
            raise CommandError(f"{username} is a superuser, always an admin")
        generated = False
        if password is None:
            password = os.environ.get("MIRRORPLANE_USER_PASSWORD") or self._prompt(username, created)
        if password is None and created:
            password, generated = secrets.token_urlsafe(12), True
        if password is not None and not generated:
            try:
                password_validation.validate_password(password, user)
            except ValidationError as error:
                raise CommandError(" ".join(error.messages)) from None
        with transaction.atomic():
            if password is not None:
                user.set_password(password)
            user.is_active = True
            user.save()
            set_role(user, role)
            if password is not None and not created:
                Token.objects.filter(user=user).delete()
        self.stdout.write(f"{'created' if created else 'updated'} {username} with role {role}")
        if generated:
            self.stdout.write(f"password: {password}")
        if token:
            self.stdout.write(f"token: {Token.objects.get_or_create(user=user)[0].key}")

    def _prompt(self, username: str, created: bool) -> str | None:
        if not sys.stdin.isatty():
            return None
        hint = "" if created else " (empty: keep the current one)"
        first = getpass.getpass(f"password for {username}{hint}: ")
        if not first:
            return None  # keep the current one, or (new user) generate one
        if getpass.getpass("again: ") != first:
            raise CommandError("the passwords differ")
        return first
