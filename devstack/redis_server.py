"""A throwaway Redis server (Debian's `redis-server`) on a loopback port."""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from controlplane.infra import processes


@dataclass
class RedisServer:
    home: str
    port: int
    pid: int = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def marker(self) -> str:
        return f"127.0.0.1:{self.port}"

    def to_dict(self) -> dict:
        return asdict(self) | {"url": self.url}

    @classmethod
    def from_dict(cls, data: dict) -> RedisServer:
        return cls(home=data["home"], port=data["port"], pid=data.get("pid", 0))

    def start(self, timeout: float = 15.0) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        if not Path(binary).exists():
            raise RuntimeError("redis-server is not installed: run `make install` (apt-get install redis-server)")
        home = Path(self.home)
        home.mkdir(parents=True, exist_ok=True)
        argv = [binary, "--bind", "127.0.0.1", "--port", str(self.port), "--dir", str(home),
                "--save", "", "--appendonly", "no", "--protected-mode", "yes"]
        self.pid = processes.spawn(argv, home / "redis.log").pid
        if not processes.wait_until(lambda: processes.port_open(self.port), timeout):
            self.stop()
            raise RuntimeError(f"redis-server did not listen on port {self.port} within {timeout:.0f}s")

    def running(self) -> bool:
        return processes.is_alive(self.pid, self.marker)

    def stop(self) -> bool:
        return processes.terminate(self.pid, self.marker, grace_seconds=5)
