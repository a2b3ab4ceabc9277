package io.mirrorplane.spark;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;

/**
 * A real-time sink that drops every row. A standby driver's warm-up query runs through it, so that
 * Spark's Kafka source, its row conversion and the sink's deserializer have their code generated and
 * compiled (Spark caches it per JVM) before a mirror's query needs the same; nothing is written.
 */
public final class DiscardingWriter extends ForeachWriter<Row> {

    private static final AtomicLong ROWS = new AtomicLong();

    @Override
    public boolean open(long partitionId, long epochId) {
        return true;
    }

    @Override
    public void process(Row row) {
        ROWS.incrementAndGet();
    }

    @Override
    public void close(Throwable error) {
    }

    /** Rows dropped in this JVM so far. */
    public static long rows() {
        return ROWS.get();
    }
}
