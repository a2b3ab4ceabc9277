"""Credentials at rest: Fernet-encrypted model fields with a key from the environment."""

from __future__ import annotations

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

_PREFIX = "fernet:"


@cache
def _fernet() -> Fernet:
    key = settings.ENCRYPTION_KEY
    if not key:
        # Development only (production refuses to start without a key): derive from SECRET_KEY.
        key = base64.urlsafe_b64encode(hashlib.sha256(settings.SECRET_KEY.encode()).digest()).decode()
    try:
        return Fernet(key)
    except ValueError as error:
        raise ImproperlyConfigured(f"MIRRORPLANE_ENCRYPTION_KEY is not a Fernet key: {error}") from None


def encrypt(plaintext: str) -> str:
    return _PREFIX + _fernet().encrypt(plaintext.encode()).decode()


def decrypt(stored: str) -> str:
    if not stored.startswith(_PREFIX):
        raise ImproperlyConfigured("an encrypted field holds a value that was never encrypted")
    try:
        return _fernet().decrypt(stored[len(_PREFIX):].encode()).decode()
    except InvalidToken:
        raise ImproperlyConfigured("credentials cannot be decrypted: MIRRORPLANE_ENCRYPTION_KEY changed") from None


class EncryptedTextField(models.TextField):
    """A text field stored encrypted; the empty string stays empty (nothing to hide)."""

    def from_db_value(self, value, expression, connection):
        return decrypt(value) if value else value

    def get_prep_value(self, value):
        value = super().get_prep_value(value)
        return encrypt(value) if value else value
