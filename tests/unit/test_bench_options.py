"""Options of `python -m bench` and the datasets they make."""

from __future__ import annotations

import pytest

from bench.datasets import datasets, variant_records
from bench.options import parse


def test_defaults_are_the_full_run():
    options = parse([])
    assert (options.records, options.record_bytes, options.key_bytes, options.partitions) == (10_000_000, 1024, 16, 8)
    assert options.tasks == (2, 4) and options.repetitions == 5 and options.mm2_tasks == (1, 2, 4, 8)
    assert options.only == ("mirrorplane", "mm2", "mm2-stock", "raw")
    assert options.latency_rates == ("5000", "50%") and options.latency_repetitions == 3
    assert options.record_sizes == (100, 10240) and options.compressions == ("lz4", "zstd")
    assert str(options.out).endswith("bench/results/latest.json")
    assert str(options.markdown_out).endswith("bench/results/latest.md")


def test_a_quick_run():
    options = parse(["--records", "200_000", "--repetitions", "1", "--tasks", "4, 2,4", "--only", "raw,mirrorplane",
                     "--skip-latency", "--mm2-tasks", "none", "--skip-variants", "--latency-rates", "5000, 50%,5000"])
    assert options.records == 200_000 and options.tasks == (4, 2) and options.only == ("mirrorplane", "raw")
    assert options.skip_latency and options.mm2_tasks == () and options.latency_rates == ("5000", "50%")
    assert options.record_sizes == () and options.compressions == ()


def test_datasets_main_first_then_sizes_then_codecs():
    options = parse(["--records", "10000000", "--record-sizes", "100,1024,10240", "--compressions", "zstd"])
    names = [(d.name, d.records, d.compression, d.repetitions, d.tasks, d.main) for d in datasets(options)]
    assert names == [("1024B", 10_000_000, "none", 5, (2, 4), True),
                     ("100B", 10_000_000, "none", 3, (2,), False),
                     ("10240B", 195_312, "none", 3, (2,), False),
                     ("1024B-zstd", 1_953_125, "zstd", 3, (2,), False)]
    main, *_, zstd = datasets(options)
    assert main.topic == "bench" and main.topic_config is None
    assert zstd.topic == "bench-1024b-zstd" and zstd.topic_config == {"compression.type": "zstd"}
    assert variant_records(parse(["--variant-records", "5000"]), 10240) == 5000


def test_producer_settings_for_every_mirror():
    assert parse([]).producer == ()
    assert parse(["--producer", "linger.ms=0, batch.size=16384"]).producer == (("linger.ms", "0"),
                                                                              ("batch.size", "16384"))


@pytest.mark.parametrize("argv", [["--records", "0"], ["--tasks", ""], ["--only", "kafka"], ["--latency-seconds", "-1"],
                                  ["--compressions", "brotli"], ["--latency-rates", "101%"], ["--tasks", "none"],
                                  ["--producer", "linger.ms"], ["--producer", "linger.ms="], ["--producer", "=0"],
                                  ["--producer", "compression.type=gzip"]])
def test_bad_options_exit_with_the_reason(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse(argv)
    assert exit_info.value.code == 2
    assert "error: argument" in capsys.readouterr().err


def test_the_brokers_keep_their_partitions_on_disk_unless_told_memory(tmp_path, monkeypatch):
    from bench import runner

    assert parse([]).broker_storage == "disk"
    with pytest.raises(SystemExit):
        parse(["--broker-storage", "ssd"])
    memory = parse(["--broker-storage", "memory", "--work-dir", str(tmp_path / "work")])
    monkeypatch.setattr(runner, "MEMORY_STORAGE", tmp_path / "shm")
    monkeypatch.setattr(runner.machine, "facts", lambda: {})
    bench = runner.Benchmark(memory)
    (tmp_path / "work" / "stack").mkdir(parents=True)  # a previous run's, on disk
    stack = bench._stack_dir()
    assert stack.parent == tmp_path / "shm" and stack.name.startswith("mirrorplane-bench-")
    assert (tmp_path / "work" / "stack").resolve() == stack, "the work dir's stack links to it"
    assert runner.Benchmark(parse(["--work-dir", str(tmp_path / "w2")]))._stack_dir() == tmp_path / "w2" / "stack"
