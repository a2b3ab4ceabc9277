"""The dev stack's brokers start fast (C1 only); the benchmark's run with the full JIT, as in production."""

from __future__ import annotations

from pathlib import Path

from controlplane.infra import processes
from devstack.kafka import KafkaCluster, new_cluster
from devstack.stack import Devstack


def test_a_test_broker_compiles_with_c1_only_and_a_benchmark_broker_with_the_full_jit(tmp_path):
    assert "-XX:TieredStopAtLevel=1" in new_cluster("east", tmp_path).jvm_options("512m")
    full = new_cluster("east", tmp_path, full_jit=True)
    assert full.jvm_options("512m") == ["-Xms512m", "-Xmx512m", "-XX:+UseG1GC"]
    assert KafkaCluster.from_dict(full.to_dict()).full_jit



def test_the_stack_remembers_that_its_brokers_run_with_the_full_jit(tmp_path):
    Devstack(root=tmp_path, brokers_full_jit=True).save()
    assert Devstack.load(tmp_path).brokers_full_jit
    assert not Devstack.load(tmp_path / "elsewhere").brokers_full_jit


def test_free_ports_never_hands_out_a_port_twice_in_one_process():
    """Ports are picked for the brokers one cluster at a time, and the kernel may offer a port again once the
    socket that found it is closed: two brokers started together were once given the same one."""
    ports = [port for _ in range(300) for port in processes.free_ports(2)]
    assert len(set(ports)) == len(ports) == 600
    east, west = new_cluster("east", Path("/nonexistent")), new_cluster("west", Path("/nonexistent"))
    assert len({east.port, east.controller_port, west.port, west.controller_port}) == 4
