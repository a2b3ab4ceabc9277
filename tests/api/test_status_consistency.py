"""The status document shows the application and its connectors as one supervision pass left them."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.utils import timezone

from mirrors.choices import ApplicationState, ConnectorState
from mirrors.models import Cluster, Connector, Deployment
from mirrors.services import status
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db


@pytest.fixture
def mirror(db):
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m", source=east, target=west)


class _PassCommitsDuringTheConnectorsQuery:
    """Stands in for the Connector model in the status module: right after the first connectors query, a
    supervision pass commits a failed application and failed connectors, as the reconciler does."""

    def __init__(self, mirror):
        self.mirror, self.queries = mirror, 0
        self.objects = self

    def filter(self, **lookups):
        rows = list(Connector.objects.filter(**lookups))
        self.queries += 1
        if self.queries == 1:
            with transaction.atomic():
                Deployment.objects.filter(mirror_name=self.mirror.name).update(
                    state=ApplicationState.FAILED, updated_at=timezone.now())
                Connector.objects.filter(mirror=self.mirror).update(state=ConnectorState.FAILED)
        return rows


def test_a_pass_committing_between_the_two_reads_is_read_again(mirror, monkeypatch):
    Deployment.objects.create(mirror_name="m", state=ApplicationState.STARTING)
    racing = _PassCommitsDuringTheConnectorsQuery(mirror)
    monkeypatch.setattr(status, "Connector", racing)

    deployment, connectors = status.recorded_states(mirror)

    assert deployment.state == ApplicationState.FAILED
    assert {c.state for c in connectors} == {ConnectorState.FAILED}, "not connectors still starting"
    assert racing.queries == 2


def test_without_a_concurrent_pass_the_connectors_are_read_once(mirror, django_assert_num_queries):
    Deployment.objects.create(mirror_name="m", state=ApplicationState.RUNNING)
    with django_assert_num_queries(3):  # the application, the connectors, the application again
        deployment, connectors = status.recorded_states(mirror)
    assert deployment.state == ApplicationState.RUNNING
    assert sorted(c.kind for c in connectors) == ["checkpoint", "heartbeat", "source"]


def test_a_mirror_never_deployed_has_its_connectors_and_no_application(mirror):
    deployment, connectors = status.recorded_states(mirror)
    assert deployment is None and len(connectors) == 3
