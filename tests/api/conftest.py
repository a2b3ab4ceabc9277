import pytest

from mirrors.services import metrics, mirrors, status
from tests.fakes import FakeRedis


@pytest.fixture
def fake_redis(monkeypatch):
    fake = FakeRedis()
    for module in (metrics, status, mirrors):
        monkeypatch.setattr(module, "get_redis", lambda: fake)
    return fake
