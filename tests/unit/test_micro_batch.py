"""What the JVM's micro-batch function reports to the driver, as the driver reads it."""

from spark_runtime.micro_batch import BatchReport, parse


def test_batches_their_progress_growth_requests_and_syncs_written_are_read():
    drained = parse([
        "B\t7\t0.25", "P\torders\t0\t0\t9\t9\t10\t100", "P\torders\t1\t5\t5\t5\t1\t10",
        "B\t8\t0.125",
        "G\torders\t4",
        "W\t12",
    ])
    assert drained.batches == [
        BatchReport(7, 0.25, ["P\torders\t0\t0\t9\t9\t10\t100", "P\torders\t1\t5\t5\t5\t1\t10"]),
        BatchReport(8, 0.125, []),
    ]
    assert drained.grow == {"orders": 4}
    assert drained.syncs_written == 12


def test_nothing_new_reads_as_nothing():
    drained = parse(["W\t0"])
    assert (drained.batches, drained.grow, drained.syncs_written) == ([], {}, 0)
