"""Dirty pages are written back before a timed run."""

from __future__ import annotations

from bench.writeback import pending_kb, write_back


def test_pending_kb_adds_dirty_and_writeback():
    meminfo = "MemTotal:       24000000 kB\nDirty:              2048 kB\nWriteback:           512 kB\n"
    assert pending_kb(meminfo) == 2560
    assert pending_kb("MemTotal: 1 kB\n") == 0


def test_write_back_reports_what_was_pending(tmp_path):
    (tmp_path / "dirty").write_bytes(b"x" * 8_000_000)
    result = write_back()
    assert set(result) == {"pending_mb", "seconds"}
    assert result["pending_mb"] >= 0 and result["seconds"] >= 0
