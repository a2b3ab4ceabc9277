"""The Spark session created in the background: users wait for it, and a failed start names its cause."""

import threading

import pytest

from spark_runtime.session import DeferredSession


class FakeSession:
    def __init__(self) -> None:
        self.readStream = "reader"
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


def test_attribute_access_waits_for_the_session():
    release = threading.Event()
    session = FakeSession()

    def create():
        release.wait(5)
        return session

    deferred = DeferredSession(create)
    seen = []
    reader = threading.Thread(target=lambda: seen.append(deferred.readStream))
    reader.start()
    reader.join(0.2)
    assert seen == []  # still waiting for create()
    release.set()
    reader.join(5)
    assert seen == ["reader"]
    assert deferred.resolve() is session
    deferred.stop()
    assert session.stopped


def test_a_session_that_cannot_start_fails_its_users_with_the_cause():
    def create():
        raise OSError("Java gateway process exited before sending its port number")

    deferred = DeferredSession(create)
    with pytest.raises(RuntimeError, match="the Spark session could not start: Java gateway process exited"):
        deferred.readStream  # noqa: B018 - the access is the test
    deferred.stop()  # nothing to stop, and no error


def test_the_status_report_survives_a_session_that_cannot_start():
    from spark_runtime.app import MirrorApplication

    def create():
        raise OSError("no Java")

    app = MirrorApplication.__new__(MirrorApplication)
    app.spark = DeferredSession(create)
    assert app._spark_ui() is None
