package io.mirrorplane.spark;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;

/**
 * What one real-time task does with the rows it reads, for one epoch: {@link RealTimeMirrorSink}
 * hands every Spark task a copy of its query's task (deserialized with the task), opens it, writes
 * each row as Spark's source produced it and closes it when the epoch ends or the task fails.
 */
interface RealTimeTask extends Serializable {

    /** The epoch {@code epochId} of Spark partition {@code partitionId} starts; rows have {@code columns}. */
    void open(long partitionId, long epochId, KafkaMirrorWriter.Columns columns);

    /** One source record, in Spark's internal form (the row is reused for the next record). */
    void write(InternalRow row);

    /**
     * The epoch's end ({@code error} null): whatever the task still owes is done, or it throws; or
     * the task's failure, with its cause.
     */
    void close(Throwable error);
}
