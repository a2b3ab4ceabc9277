package io.mirrorplane.spark;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.sql.catalyst.InternalRow;

/**
 * A real-time task that drops every row. A standby driver's warm-up query runs through it in
 * {@link RealTimeMirrorSink}, so that the slot source, Spark's row conversion and the sink have
 * their code generated and compiled (Spark caches it per JVM) before a mirror's query needs the
 * same; nothing is written.
 */
public final class DiscardingWriter implements RealTimeTask {

    private static final long serialVersionUID = 1L;
    private static final AtomicLong ROWS = new AtomicLong();

    @Override
    public void open(long partitionId, long epochId, KafkaMirrorWriter.Columns columns) { }

    @Override
    public void write(InternalRow row) {
        ROWS.incrementAndGet();
    }

    @Override
    public void close(Throwable error) { }

    /** Rows dropped in this JVM so far. */
    public static long rows() {
        return ROWS.get();
    }
}
