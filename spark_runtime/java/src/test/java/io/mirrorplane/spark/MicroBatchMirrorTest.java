package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.kafka010.KafkaBatchInputPartition;
import org.apache.spark.sql.kafka010.KafkaOffsetRange;
import org.junit.jupiter.api.Test;

/**
 * The micro-batch function's bookkeeping between batches: the writer's lines taken in, MM2's
 * commit-time promotion once per flush interval, the report the Python driver drains (parsed by
 * spark_runtime/micro_batch.py), and batches waiting for remote partitions.
 */
class MicroBatchMirrorTest {

    private static final String SYNC_TOPIC = "mm2-offset-syncs.target.internal";
    private static final long FLUSH_MS = 10_000;
    private static final long T0 = 1_800_000_000_000L;

    private static MicroBatchMirror mirror(String syncTopic, Map<String, String> state) {
        return new MicroBatchMirror(Map.of(), Map.of("orders", "source.orders"), 2, 100, syncTopic, Map.of(),
            FLUSH_MS, state, Map.of("orders", 2));
    }

    private static MicroBatchMirror.Sync sync(String key, long upstream, long downstream) {
        return new MicroBatchMirror.Sync(key, upstream, downstream);
    }

    private static KafkaBatchInputPartition range(String topic, int partition) {
        return new KafkaBatchInputPartition(new KafkaOffsetRange(new TopicPartition(topic, partition), 0, 10,
            scala.Option.empty()), Map.of(), 1_000, true, false);
    }

    @Test
    void theWritersLinesGiveProgressSyncsAndTheNextState() {
        MicroBatchMirror mirror = mirror(null, Map.of());
        List<String> progress = new ArrayList<>();
        List<MicroBatchMirror.Sync> syncs = mirror.absorb(List.of(
            "P\torders\t0\t10\t14\t2\t3\t7", "S\torders\t0\t10\t0\t14\t2", "T\torders\t0\t14\t2\t2",
            "P\torders\t1\t0\t5\t8\t6\t60", "T\torders\t1\t5\t8\t3"), progress, T0);
        assertEquals(List.of("P\torders\t0\t10\t14\t2\t3\t7", "P\torders\t1\t0\t5\t8\t6\t60"), progress);
        assertEquals(List.of(sync("orders\t0", 10, 0), sync("orders\t0", 14, 2)), syncs);
        assertEquals(Map.of("orders\t0", "14\t2\t2", "orders\t1", "5\t8\t3"), mirror.states(),
            "offset syncs off: nothing promoted");
    }

    @Test
    void aSyncLineOfManyPairsGivesThemInOrder() {
        List<MicroBatchMirror.Sync> syncs = new ArrayList<>();
        MicroBatchMirror.addSyncs("S\tlogs.v2\t11\t0\t0\t100\t100\t9000000000\t9000000100", syncs);
        assertEquals(List.of(sync("logs.v2\t11", 0, 0), sync("logs.v2\t11", 100, 100),
            sync("logs.v2\t11", 9_000_000_000L, 9_000_000_100L)), syncs);
        assertThrows(IllegalStateException.class, () -> MicroBatchMirror.addSyncs("S\torders\t0\t10", syncs));
        assertThrows(IllegalStateException.class, () -> MicroBatchMirror.addSyncs("S\torders", syncs));
    }

    @Test
    void anUnknownWriterLineFailsTheBatch() {
        MicroBatchMirror mirror = mirror(SYNC_TOPIC, Map.of());
        assertThrows(IllegalStateException.class, () -> mirror.absorb(List.of("X\torders\t0"), new ArrayList<>(), T0));
    }

    @Test
    void theLatestPositionIsPromotedOncePerFlushInterval() {
        MicroBatchMirror mirror = mirror(SYNC_TOPIC, Map.of());
        List<String> progress = new ArrayList<>();
        // synced by the rule in this batch: nothing to promote
        assertEquals(List.of(sync("orders\t0", 0, 0)),
            mirror.absorb(List.of("S\torders\t0\t0\t0", "T\torders\t0\t4\t4\t0"), progress, T0));
        // not synced since, but within the flush interval of the last sync
        assertEquals(List.of(), mirror.absorb(List.of("T\torders\t0\t9\t9\t0"), progress, T0 + FLUSH_MS - 1));
        assertEquals("9\t9\t0", mirror.states().get("orders\t0"));
        // the interval has passed: the latest position is synced, and the state says so
        assertEquals(List.of(sync("orders\t0", 12, 12)),
            mirror.absorb(List.of("T\torders\t0\t12\t12\t0"), progress, T0 + FLUSH_MS));
        assertEquals("12\t12\t12", mirror.states().get("orders\t0"));
        // an interval later with nothing new: the latest position is already synced
        assertEquals(List.of(), mirror.absorb(List.of(), progress, T0 + 3 * FLUSH_MS));
    }

    @Test
    void partitionsWithoutRecordsInTheBatchArePromotedToo() {
        MicroBatchMirror mirror = mirror(SYNC_TOPIC, Map.of("orders\t1", "20\t30\t25", "orders\t2", "-1\t-1\t-1"));
        assertEquals(List.of(sync("orders\t1", 20, 30)), mirror.absorb(List.of(), new ArrayList<>(), T0));
        assertEquals(Map.of("orders\t1", "20\t30\t30", "orders\t2", "-1\t-1\t-1"), mirror.states());
    }

    @Test
    void withoutOffsetSyncsNothingIsPromoted() {
        MicroBatchMirror mirror = mirror(null, Map.of("orders\t1", "20\t30\t25"));
        assertEquals(List.of(), mirror.absorb(List.of(), new ArrayList<>(), T0));
        assertEquals("20\t30\t25", mirror.states().get("orders\t1"));
    }

    @Test
    void drainReportsBatchesWithTheirProgressThenSyncsWritten() {
        MicroBatchMirror mirror = mirror(SYNC_TOPIC, Map.of());
        assertEquals("W\t0", mirror.drain(), "nothing happened");
        mirror.report(7, 0.25, List.of("P\torders\t0\t0\t9\t9\t10\t100", "P\torders\t1\t5\t5\t5\t1\t10"));
        mirror.report(8, 0.125, List.of());
        assertEquals("B\t7\t0.25\nP\torders\t0\t0\t9\t9\t10\t100\nP\torders\t1\t5\t5\t5\t1\t10\nB\t8\t0.125\nW\t0",
            mirror.drain());
        assertEquals("W\t0", mirror.drain(), "each batch is reported once");
    }

    @Test
    void batchesOfKnownPartitionsOrOfRowsDoNotWait() throws InterruptedException {
        MicroBatchMirror mirror = mirror(SYNC_TOPIC, Map.of());
        mirror.awaitRemotePartitions(List.of(range("orders", 0), range("orders", 1), range("new-topic", 9)));
        mirror.awaitRemotePartitions(null);
        assertEquals("W\t0", mirror.drain(), "no growth asked for");
    }

    @Test
    void aBatchReadingANewPartitionWaitsUntilTheRemotePartitionsExist() throws InterruptedException {
        MicroBatchMirror mirror = mirror(SYNC_TOPIC, Map.of());
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread batch = new Thread(() -> {
            try {
                mirror.awaitRemotePartitions(List.of(range("orders", 0), range("orders", 3)));
            } catch (Throwable e) {
                failure.set(e);
            }
        });
        batch.start();
        String drained = mirror.drain();
        for (long deadline = System.currentTimeMillis() + 10_000;
             !drained.contains("G") && System.currentTimeMillis() < deadline; drained = mirror.drain()) {
            Thread.sleep(10);
        }
        assertEquals("G\torders\t4\nW\t0", drained, "the driver is asked for 4 partitions of orders' remote topic");

        mirror.partitionsReady(Map.of("orders", 3));
        batch.join(200);
        assertTrue(batch.isAlive(), "3 partitions are not enough");
        assertEquals("G\torders\t4\nW\t0", mirror.drain());

        mirror.partitionsReady(Map.of("orders", 4));
        batch.join(10_000);
        assertFalse(batch.isAlive());
        assertEquals(null, failure.get());
        assertEquals("W\t0", mirror.drain(), "nothing more is asked for");
    }
}
