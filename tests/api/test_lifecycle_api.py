"""Connector verbs with Kafka Connect's paths (202 at once), and the event history."""

from __future__ import annotations

import pytest

from mirrors.models import Cluster, Connector, Deployment, Event
from mirrors.services.mirrors import create_mirror

pytestmark = pytest.mark.django_db

BASE = "/api/v1/mirrors/m/connectors"


@pytest.fixture
def mirror(db):
    east = Cluster.objects.create(alias="east", bootstrap_servers="east:9092")
    west = Cluster.objects.create(alias="west", bootstrap_servers="west:9092")
    return create_mirror(name="m", source=east, target=west)


@pytest.mark.parametrize(("verb", "desired"), [("pause", "paused"), ("stop", "stopped"), ("resume", "running")])
def test_state_verbs_are_accepted_at_once_and_leave_the_other_connectors_alone(api, mirror, verb, desired):
    response = api.put(f"{BASE}/source/{verb}/")
    assert response.status_code == 202, response.content
    assert response.json()["desired_state"] == desired
    states = dict(Connector.objects.values_list("kind", "desired_state"))
    assert states == {"source": desired, "checkpoint": "running", "heartbeat": "running"}
    event = Event.objects.get(action=verb)
    assert (event.actor, event.mirror, event.connector, event.to_state) == ("admin", "m", "source", desired)


def test_restart_bumps_the_restart_token(api, mirror):
    response = api.post(f"{BASE}/checkpoint/restart/?include_tasks=true")
    assert response.status_code == 202
    assert Connector.objects.get(kind="checkpoint").restart_token == 1
    assert "connector and tasks" in Event.objects.get(action="restart").detail


def test_restart_only_failed_restarts_nothing_when_nothing_failed(api, mirror):
    Connector.objects.filter(kind="source").update(state="RUNNING", tasks=[{"id": 0, "state": "RUNNING"}])
    response = api.post(f"{BASE}/source/restart/?only_failed=true&include_tasks=true")
    assert response.status_code == 200 and "nothing failed" in response.json()["detail"]
    assert Connector.objects.get(kind="source").restart_token == 0
    Connector.objects.filter(kind="source").update(tasks=[{"id": 0, "state": "FAILED"}])
    assert api.post(f"{BASE}/source/restart/?only_failed=true&include_tasks=true").status_code == 202


def test_task_restart_needs_a_known_task(api, mirror):
    Connector.objects.filter(kind="source").update(tasks=[{"id": 0, "state": "RUNNING"}, {"id": 1, "state": "FAILED"}])
    assert api.post(f"{BASE}/source/tasks/1/restart/").status_code == 202
    response = api.post(f"{BASE}/source/tasks/7/restart/")
    assert response.status_code == 404 and "no task 7" in response.json()["detail"]


def test_restart_revives_an_application_given_up_on(api, mirror):
    Deployment.objects.create(mirror_name="m", state="failed", restarts=2, consecutive_failures=3, generation=1)
    assert api.post(f"{BASE}/source/restart/").status_code == 202
    deployment = Deployment.objects.get(mirror_name="m")
    assert (deployment.state, deployment.restarts) == ("not_running", 0)


def test_unknown_mirror_kind_or_bad_flag_is_a_clear_error(api, mirror):
    assert api.put("/api/v1/mirrors/nope/connectors/source/pause/").status_code == 404
    response = api.put(f"{BASE}/sink/pause/")
    assert response.status_code == 404 and "source, checkpoint, heartbeat" in response.json()["detail"]
    response = api.post(f"{BASE}/source/restart/?only_failed=maybe")
    assert response.status_code == 400 and "only_failed" in response.json()
    assert api.post(f"{BASE}/source/pause/").status_code == 405


def test_events_are_listed_newest_first_and_per_mirror(api, mirror):
    api.put(f"{BASE}/source/pause/")
    api.put(f"{BASE}/source/resume/")
    events = api.get("/api/v1/events/?mirror=m&kind=action").json()
    assert [e["action"] for e in events][:2] == ["resume", "pause"]
    assert api.get("/api/v1/mirrors/m/events/?action=pause").json()[0]["from_state"] == "UNASSIGNED"
    assert api.get("/api/v1/events/?limit=0").status_code == 400
    assert api.get("/api/v1/mirrors/nope/events/").status_code == 404


def test_api_changes_are_recorded_with_their_actor(api, mirror):
    api.patch("/api/v1/mirrors/m/", {"topics": "orders"}, format="json")
    api.post("/api/v1/clusters/", {"alias": "north", "bootstrap_servers": "north:9092", "password": "s3cret"},
             format="json")
    actions = set(Event.objects.filter(actor="admin").values_list("action", "mirror", "cluster"))
    assert {("update", "m", ""), ("create", "", "north")} <= actions
    assert not Event.objects.filter(detail__contains="s3cret").exists()


def test_user_management_is_recorded_without_passwords(api, db):
    assert api.post("/api/v1/users/", {"username": "carol", "role": "viewer", "password": "Carol-pass-12345"},
                    format="json").status_code == 201
    assert api.patch("/api/v1/users/carol/", {"role": "operator", "password": "Carol-new-pass-678"},
                     format="json").status_code == 200
    assert api.delete("/api/v1/users/carol/").status_code == 204
    steps = list(Event.objects.filter(actor="admin", action__endswith="-user").order_by("id")
                 .values_list("action", "from_state", "to_state"))
    assert steps == [("create-user", "", "viewer"), ("update-user", "viewer", "operator"), ("delete-user", "", "")]
    assert "password" in Event.objects.get(action="update-user").detail
    assert not Event.objects.filter(detail__contains="Carol-").exists()
