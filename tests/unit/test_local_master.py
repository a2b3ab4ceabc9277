"""A local application gets task threads for real-time mode and keeps its operator's cores."""

from __future__ import annotations

import pytest

from mirrorcore.local_master import widened


@pytest.mark.parametrize(("master", "expected"), [
    ("local[2]", ("local[16]", 2)),
    ("local", ("local[16]", 1)),
    ("local[*]", ("local[16]", 4)),
    ("local[3,2]", ("local[16,2]", 3)),
    (" local[2] ", ("local[16]", 2)),
])
def test_a_local_master_is_widened_and_its_cores_kept(master, expected):
    assert widened(master, 16, cpu_count=4) == expected


@pytest.mark.parametrize("master", ["local[16]", "local[32]", "local[*]"])
def test_a_local_master_with_enough_threads_is_left_alone(master):
    assert widened(master, 16, cpu_count=16) == (master, None)


@pytest.mark.parametrize("master", ["yarn", "spark://host:7077", "k8s://https://k:443", "local-cluster[2,1,1024]"])
def test_other_masters_are_left_alone(master):
    assert widened(master, 16, cpu_count=4) == (master, None)


def test_no_widening_when_threads_are_not_wanted():
    assert widened("local[2]", 0, cpu_count=4) == ("local[2]", None)
