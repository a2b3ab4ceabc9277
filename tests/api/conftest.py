import pytest

from mirrors.services import metrics, mirrors, overview, status
from tests.fakes import FakeRedis


@pytest.fixture
def fake_redis(monkeypatch):
    fake = FakeRedis()
    for module in (metrics, status, mirrors, overview):
        monkeypatch.setattr(module, "get_redis", lambda: fake)
    return fake
