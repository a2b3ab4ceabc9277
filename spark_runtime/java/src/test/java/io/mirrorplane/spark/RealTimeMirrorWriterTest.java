package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/** Real-time mode's offset-sync keys and the progress lines the Python driver reads. */
class RealTimeMirrorWriterTest {

    @Test
    void theSyncKeyIsMm2sLengthPrefixedTopicThenPartition() {
        assertArrayEquals(new byte[] {0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0, 0, 0, 3},
            RealTimeMirrorWriter.syncKey("orders", 3));

        ByteBuffer key = ByteBuffer.wrap(RealTimeMirrorWriter.syncKey("zähler", 70_000));
        byte[] name = new byte[key.getShort()];
        key.get(name);
        assertEquals("zähler", new String(name, StandardCharsets.UTF_8), "the length counts UTF-8 bytes");
        assertEquals(70_000, key.getInt());
        assertEquals(0, key.remaining());
    }

    @Test
    void eachIndexOfAConfigurationHasAProducerOfItsOwnThatLasts() {
        Map<String, String> config = Map.of("bootstrap.servers", "127.0.0.1:9", "client.id", "producers-test");
        try {
            assertSame(KafkaMirrorWriter.producer(config, 1), KafkaMirrorWriter.producer(config, 1));
            assertSame(KafkaMirrorWriter.producer(config), KafkaMirrorWriter.producer(config, 0));
            assertNotSame(KafkaMirrorWriter.producer(config, 0), KafkaMirrorWriter.producer(config, 1),
                "each index is a producer of its own");
        } finally {
            KafkaMirrorWriter.reset();
        }
    }

    @Test
    void partitionTasksTakeTheProducersInTurn() {
        int[] tasksPerProducer = new int[2];
        for (long partition = 0; partition < 8; partition++) {
            tasksPerProducer[RealTimeMirrorWriter.producerOf(partition, 2)]++;
        }
        assertArrayEquals(new int[] {4, 4}, tasksPerProducer);
        assertEquals(2, RealTimeMirrorWriter.producerOf(5, 3));
        assertEquals(0, RealTimeMirrorWriter.producerOf(5, 0), "no producer count is one producer");
    }

    @Test
    void aFailedRecordSendIsTheTasksErrorBeforeAFailedSyncWrite() {
        Exception send = new org.apache.kafka.common.errors.TimeoutException("Expiring 1 record(s) for source.orders-0");
        Exception sync = new org.apache.kafka.common.errors.TimeoutException("Expiring 1 record(s) for mm2-offset-syncs");

        IllegalStateException error = RealTimeMirrorWriter.error(send, sync, "mm2-offset-syncs.target.internal");
        assertEquals("producing to the target cluster failed: " + send, error.getMessage());
        assertSame(send, error.getCause());
        assertEquals("writing offset syncs to mm2-offset-syncs.target.internal failed: " + sync,
            RealTimeMirrorWriter.error(null, sync, "mm2-offset-syncs.target.internal").getMessage());
        assertNull(RealTimeMirrorWriter.error(null, null, null));
    }

    @Test
    void aCommitSyncsEachPartitionsLatestPositionOnce() {
        List<long[]> syncs = new java.util.ArrayList<>();
        PartitionProgress p = new PartitionProgress(0, 100, null, (up, down) -> syncs.add(new long[] {up, down}));
        p.acknowledged(0, 10);
        p.acknowledged(1, 11);
        p.acknowledged(2, 12);
        assertEquals(1, syncs.size(), "MM2's rule syncs the first record only");

        assertEquals(1, RealTimeMirrorWriter.commit(List.of(p)));
        assertArrayEquals(new long[] {2, 12}, syncs.get(1), "the latest acknowledged position");
        assertEquals(0, RealTimeMirrorWriter.commit(List.of(p)), "nothing new since the last commit");
        assertEquals(2, syncs.size());
    }

    @Test
    void anEpochsPositionsReplaceTheTotalsAndItsCountsAddUp() {
        assertArrayEquals(new long[] {20, 30, 15, 150},
            RealTimeMirrorWriter.addEpoch(new long[] {9, 19, 10, 100}, new long[] {20, 30, 5, 50}));
        // an epoch that saw no acknowledgement keeps the positions before it
        assertArrayEquals(new long[] {9, 19, 12, 120},
            RealTimeMirrorWriter.addEpoch(new long[] {9, 19, 10, 100}, new long[] {-1, -1, 2, 20}));
    }

    @Test
    void progressLinesAddTheRunningEpochsToTheFinishedOnes() {
        PartitionProgress running = new PartitionProgress(10, 100, null);
        running.records = 2;
        running.bytes = 20;
        running.acknowledged(10, 20);
        running.acknowledged(11, 21);
        PartitionProgress unacknowledged = new PartitionProgress(0, 100, null);
        unacknowledged.records = 1;
        unacknowledged.bytes = 5;
        PartitionProgress quiet = new PartitionProgress(50, 100, null);
        quiet.records = 3;
        quiet.bytes = 7;

        String lines = RealTimeMirrorWriter.progress(
            Map.of("a\t0", new long[] {9, 19, 10, 100}, "c\t2", new long[] {49, 99, 40, 400}),
            Map.of("a\t0", running, "b\t1", unacknowledged, "c\t2", quiet));
        List<String> sorted = Arrays.stream(lines.split("\n")).sorted().toList();
        // P, topic, partition, last upstream, last downstream, records and bytes since the JVM started
        assertEquals(List.of("P\ta\t0\t11\t21\t12\t120", "P\tb\t1\t-1\t-1\t1\t5", "P\tc\t2\t49\t99\t43\t407"), sorted);
    }

    @Test
    void nothingCopiedIsNoLine() {
        assertEquals("", RealTimeMirrorWriter.progress(Map.of(), Map.of()));
        assertEquals("P\ta\t0\t9\t19\t10\t100",
            RealTimeMirrorWriter.progress(Map.of("a\t0", new long[] {9, 19, 10, 100}), Map.of()));
    }
}
