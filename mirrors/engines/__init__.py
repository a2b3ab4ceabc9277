"""Where mirror applications run: this host's processes (`local`) or a YARN cluster (`yarn`).

A mirror's engine follows from its Spark master (`spark.master`, else SPARK_MASTER): `yarn` runs
it in cluster deploy mode on YARN, anything else (`local[N]`, `spark://...`) in client mode here.
"""

from __future__ import annotations

from mirrors.engines.base import Application, Engine, EngineError, EngineUnavailable, Outcome
from mirrors.engines.local import LocalEngine
from mirrors.engines.yarn import YarnEngine
from mirrors.models import Mirror
from mirrors.services import runtime

__all__ = ["Application", "Engine", "EngineError", "EngineUnavailable", "Engines", "Outcome", "engine_name"]

ENGINES: dict[str, type[Engine]] = {LocalEngine.name: LocalEngine, YarnEngine.name: YarnEngine}


def engine_name(mirror: Mirror) -> str:
    return YarnEngine.name if runtime.master(mirror) == "yarn" else LocalEngine.name


class Engines:
    """The engines of one supervision pass, created on first use."""

    def __init__(self) -> None:
        self._engines: dict[str, Engine] = {}

    def get(self, name: str) -> Engine:
        if name not in self._engines:
            self._engines[name] = ENGINES.get(name, LocalEngine)()
        return self._engines[name]

    def for_mirror(self, mirror: Mirror) -> Engine:
        return self.get(engine_name(mirror))

    def configured(self) -> set[str]:
        """The engines this installation can reach: each pass asks them all, so an application whose
        mirror and deployment are both gone (a restored database) is still found and stopped."""
        return {name for name in ENGINES if self.get(name).configured}
