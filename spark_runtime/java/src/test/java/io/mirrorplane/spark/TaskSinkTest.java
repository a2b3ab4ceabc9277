package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.spark.TaskKilledException;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

/**
 * A task's records to the target and its summary lines, against Kafka's in-memory producer: it
 * acknowledges each remote partition's records with consecutive offsets from 0.
 */
class TaskSinkTest {

    private static final Map<String, String> REMOTE = Map.of("orders", "source.orders", "audit", "source.audit");

    private static MockProducer<byte[], byte[]> producer(boolean autoComplete) {
        return new MockProducer<>(cluster(), autoComplete, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static Cluster cluster() {
        Node node = new Node(0, "localhost", 9092);
        List<PartitionInfo> partitions = new ArrayList<>();
        for (String topic : REMOTE.values()) {
            for (int p = 0; p < 3; p++) {
                partitions.add(new PartitionInfo(topic, p, node, new Node[] {node}, new Node[] {node}));
            }
        }
        return new Cluster("target", List.of(node), partitions, Set.of(), Set.of());
    }

    /** A producer whose first flush is interrupted, as Spark interrupts a task it cancels. */
    private static final class InterruptedFlush extends MockProducer<byte[], byte[]> {
        private int flushes;

        InterruptedFlush() {
            super(cluster(), false, new ByteArraySerializer(), new ByteArraySerializer());
        }

        @Override
        public synchronized void flush() {
            if (flushes++ == 0) {
                throw new InterruptException(new InterruptedException()); // sets the thread's flag, as Kafka's does
            }
            super.flush();
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> lines(TaskSink sink) {
        List<String> lines = new ArrayList<>();
        sink.finish().forEachRemaining(lines::add);
        return lines;
    }

    @Test
    void eachRecordKeepsItsPartitionKeyValueHeadersAndTimestamp() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        List<Header> headers = List.of(new RecordHeader("trace", bytes("t-1")), new RecordHeader("empty", null));
        sink.send("orders", 2, 17, 1_700_000_000_123L, bytes("k"), bytes("value"), headers);
        sink.send("orders", 2, 18, null, null, null, null);

        ProducerRecord<byte[], byte[]> first = producer.history().get(0);
        assertEquals("source.orders", first.topic());
        assertEquals(2, first.partition());
        assertEquals(1_700_000_000_123L, first.timestamp());
        assertArrayEquals(bytes("k"), first.key());
        assertArrayEquals(bytes("value"), first.value());
        assertEquals(headers, List.of(first.headers().toArray()));
        ProducerRecord<byte[], byte[]> second = producer.history().get(1);
        assertNull(second.timestamp());
        assertNull(second.key());
        assertNull(second.value());
        assertEquals(0, second.headers().toArray().length);
    }

    @Test
    void theSummaryHasProgressSyncsAndStatePerSourcePartition() {
        TaskSink sink = new TaskSink(producer(true), REMOTE, 100, Map.of(), StopGate.generation());
        sink.send("orders", 0, 10, null, bytes("ab"), bytes("cde"), null);
        sink.send("orders", 0, 11, null, null, bytes("f"), null);
        sink.send("orders", 0, 14, null, bytes("g"), null, null); // 12 and 13 skipped upstream
        sink.send("audit", 1, 0, null, null, bytes("x"), null);

        assertEquals(List.of(
            // P: topic, partition, first upstream, last upstream, last downstream, records, bytes
            "P\torders\t0\t10\t14\t2\t3\t7",
            // S: the offset syncs (upstream, downstream) the rule asked for, in order, on one line
            "S\torders\t0\t10\t0\t14\t2",
            // T: the rule's state for the next batch (previous upstream, downstream, last synced downstream)
            "T\torders\t0\t14\t2\t2",
            "P\taudit\t1\t0\t0\t0\t1\t1",
            "S\taudit\t1\t0\t0",
            "T\taudit\t1\t0\t0\t0"), lines(sink));
    }

    @Test
    void thePreviousBatchStateContinuesTheSyncRule() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink first = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        for (long offset = 0; offset < 3; offset++) {
            first.send("orders", 0, offset, null, null, bytes("v"), null);
        }
        assertEquals("T\torders\t0\t2\t2\t0", lines(first).get(2));

        TaskSink next = new TaskSink(producer, REMOTE, 100, Map.of("orders\t0", "2\t2\t0"), StopGate.generation());
        next.send("orders", 0, 3, null, null, bytes("v"), null);
        assertEquals(List.of("P\torders\t0\t3\t3\t3\t1\t1", "T\torders\t0\t3\t3\t0"), lines(next));

        // a new target partition starts at downstream 0, behind the state's 3: a truncation, hence a sync
        TaskSink recreated = new TaskSink(producer(true), REMOTE, 100, Map.of("orders\t0", "3\t3\t0"), StopGate.generation());
        recreated.send("orders", 0, 4, null, null, bytes("v"), null);
        assertEquals(List.of("P\torders\t0\t4\t4\t0\t1\t1", "S\torders\t0\t4\t0", "T\torders\t0\t4\t0\t0"),
            lines(recreated));
    }

    @Test
    void aSourceTopicWithoutRemoteTopicIsRefused() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        IllegalStateException error = assertThrows(IllegalStateException.class,
            () -> sink.send("unknown", 0, 0, null, null, null, null));
        assertTrue(error.getMessage().contains("unknown"));
        assertTrue(producer.history().isEmpty());
    }

    @Test
    void aFailedSendFailsTheTaskOnceEveryRecordIsSettled() {
        MockProducer<byte[], byte[]> producer = producer(false);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        long before = TaskSink.inFlight();
        sink.send("orders", 0, 0, null, null, bytes("a"), null);
        sink.send("orders", 0, 1, null, null, bytes("b"), null);
        assertEquals(before + 2, TaskSink.inFlight());

        RuntimeException refused = new RuntimeException("not enough replicas");
        producer.errorNext(refused);
        assertTrue(sink.failed());
        assertSame(refused, sink.failure());
        IllegalStateException error = assertThrows(IllegalStateException.class, sink::finish);
        assertSame(refused, error.getCause());
        assertEquals(before, TaskSink.inFlight(), "the flush acknowledged the other record");
    }

    @Test
    void summariesWaitForEveryAcknowledgement() {
        MockProducer<byte[], byte[]> producer = producer(false);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        sink.send("orders", 1, 5, null, null, bytes("a"), null);
        sink.send("orders", 1, 6, null, null, bytes("b"), null);
        assertEquals(-1, sink.progress().get("orders\t1").lastDownstream(), "nothing acknowledged yet");
        // finish() flushes the producer: both records are acknowledged before the lines are made
        assertEquals(List.of("P\torders\t1\t5\t6\t1\t2\t2", "S\torders\t1\t5\t0", "T\torders\t1\t6\t1\t0"),
            lines(sink));
    }

    @Test
    void aTaskEndingEarlyCountsEveryRecordItSentThoughItsFlushIsInterrupted() {
        InterruptedFlush producer = new InterruptedFlush();
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        sink.send("orders", 0, 41, null, null, bytes("a"), null);
        sink.send("orders", 0, 42, null, null, bytes("b"), null);
        try {
            sink.settle();
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the task");
        } finally {
            Thread.interrupted();
        }
        assertEquals(42, sink.progress().get("orders\t0").lastUpstream(),
            "both records acknowledged before the task reports its position");
        assertEquals(2, producer.flushes);
    }

    @Test
    void summariesWaitForEveryAcknowledgementThoughTheFlushIsInterrupted() {
        TaskSink sink = new TaskSink(new InterruptedFlush(), REMOTE, 100, Map.of(), StopGate.generation());
        sink.send("orders", 1, 5, null, null, bytes("a"), null);
        try {
            assertEquals("P\torders\t1\t5\t5\t0\t1\t1", lines(sink).get(0));
            assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept for the task");
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void aTaskOfAStoppedQuerySendsNothingMore() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink stopped = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        stopped.send("orders", 0, 0, null, null, bytes("a"), null);
        StopGate.close(); // the driver stops the query
        TaskKilledException refused = assertThrows(TaskKilledException.class,
            () -> stopped.send("orders", 0, 1, null, null, bytes("b"), null));
        assertEquals("the replication query was stopped", refused.reason());
        TaskSink next = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation()); // the next query's
        next.send("orders", 0, 1, null, null, bytes("b"), null);
        assertEquals(List.of("a", "b"), producer.history().stream()
            .map(record -> new String(record.value(), StandardCharsets.UTF_8)).toList());
        assertEquals(List.of("P\torders\t0\t0\t0\t0\t1\t1"),
            lines(stopped).stream().filter(line -> line.startsWith("P")).toList(), "the refused record is not counted");
    }

    @Test
    void withEmittersSyncsAreHandedOverInsteadOfSummarized() {
        Map<String, List<String>> emitted = new HashMap<>();
        TaskSink sink = new TaskSink(producer(true), REMOTE, 1, Map.of(),
            key -> (up, down) -> emitted.computeIfAbsent(key, k -> new ArrayList<>()).add(up + "->" + down),
            StopGate.generation());
        for (long offset = 0; offset < 4; offset++) {
            sink.send("audit", 2, offset, null, null, bytes("v"), null);
        }
        assertEquals(Map.of("audit\t2", List.of("0->0", "2->2")), emitted);
        assertEquals(List.of("P\taudit\t2\t0\t3\t3\t4\t4", "T\taudit\t2\t3\t3\t2"), lines(sink));
    }

    /** A source record as Spark's row: the same UnsafeRow each time, as a task's projection reuses it. */
    private static UnsafeRow row(UnsafeProjection projection, String topic, int partition, long offset, String value,
                                 Header... headers) {
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(topic, partition, offset, 1_700_000_000_123L,
            TimestampType.CREATE_TIME, 0, value.length(), null, bytes(value), new RecordHeaders(headers),
            java.util.Optional.empty());
        return projection.apply(SlotReader.row(record, UTF8String.fromString(topic), SlotReader.names()));
    }

    @Test
    void rowsInSparksInternalFormAreSentAsTheRecordsTheyHold() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        KafkaMirrorWriter.Columns columns = new KafkaMirrorWriter.Columns(SlotSource.SCHEMA);
        UnsafeProjection projection = UnsafeProjection.create(SlotSource.SCHEMA);
        sink.send(row(projection, "orders", 0, 5, "a", new RecordHeader("trace", bytes("t-1"))), columns);
        sink.send(row(projection, "orders", 1, 7, "b"), columns);
        sink.send(row(projection, "audit", 1, 3, "c"), columns); // a name of another length in the reused row
        sink.send(row(projection, "orders", 0, 6, "d"), columns);

        List<String> sent = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> record : producer.history()) {
            sent.add(record.topic() + "/" + record.partition() + " " + new String(record.value(), StandardCharsets.UTF_8)
                + " @" + record.timestamp());
        }
        assertEquals(List.of("source.orders/0 a @1700000000123", "source.orders/1 b @1700000000123",
            "source.audit/1 c @1700000000123", "source.orders/0 d @1700000000123"), sent);
        assertEquals(List.of(new RecordHeader("trace", bytes("t-1"))),
            List.of(producer.history().get(0).headers().toArray()));
        assertEquals(List.of("P\torders\t0\t5\t6\t1\t2\t2", "P\torders\t1\t7\t7\t0\t1\t1",
            "P\taudit\t1\t3\t3\t0\t1\t1"), lines(sink).stream().filter(line -> line.startsWith("P")).toList());
    }

    @Test
    void headerNamesInAReusedRowAreReadForEachRecord() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        KafkaMirrorWriter.Columns columns = new KafkaMirrorWriter.Columns(SlotSource.SCHEMA);
        UnsafeProjection projection = UnsafeProjection.create(SlotSource.SCHEMA);
        sink.send(row(projection, "orders", 0, 1, "a", new RecordHeader("trace", bytes("1"))), columns);
        sink.send(row(projection, "orders", 0, 2, "b", new RecordHeader("tenant", bytes("2")),
            new RecordHeader("trace", bytes("3"))), columns);
        sink.send(row(projection, "orders", 0, 3, "c", new RecordHeader("trace", bytes("4"))), columns);

        List<String> headers = new ArrayList<>();
        for (ProducerRecord<byte[], byte[]> record : producer.history()) {
            StringBuilder line = new StringBuilder();
            record.headers().forEach(h -> line.append(h.key()).append('=').append(new String(h.value(),
                StandardCharsets.UTF_8)).append(' '));
            headers.add(line.toString().trim());
        }
        assertEquals(List.of("trace=1", "tenant=2 trace=3", "trace=4"), headers);
    }

    @Test
    void aHandedOffRecordIsSentAsTheConsumerReadIt() {
        MockProducer<byte[], byte[]> producer = producer(true);
        TaskSink sink = new TaskSink(producer, REMOTE, 100, Map.of(), StopGate.generation());
        RecordHeaders headers = new RecordHeaders(new Header[] {new RecordHeader("trace", bytes("t-1")),
            new RecordHeader("empty", null)});
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 2, 17L, 1_700_000_000_123L,
            TimestampType.CREATE_TIME, 1, 5, bytes("k"), bytes("value"), headers, java.util.Optional.empty());
        sink.send(record);
        sink.send(new ConsumerRecord<>("audit", 1, 3L, null, null));

        ProducerRecord<byte[], byte[]> first = producer.history().get(0);
        assertEquals("source.orders", first.topic());
        assertEquals(2, first.partition());
        assertEquals(1_700_000_000_123L, first.timestamp());
        assertSame(record.key(), first.key()); // nothing copied
        assertSame(record.value(), first.value());
        assertEquals(List.of(headers.toArray()), List.of(first.headers().toArray()));
        ProducerRecord<byte[], byte[]> second = producer.history().get(1);
        assertEquals("source.audit", second.topic());
        assertNull(second.timestamp()); // the record had none (-1): the producer stamps it
        assertNull(second.value());
        assertEquals(List.of("P\torders\t2\t17\t17\t0\t1\t6", "P\taudit\t1\t3\t3\t0\t1\t0"),
            lines(sink).stream().filter(line -> line.startsWith("P")).toList());
    }

    @Test
    void rowsOfPartitionAndOffsetOnlyAreAHandOffsColumns() {
        KafkaMirrorWriter.Columns handOff = new KafkaMirrorWriter.Columns(new org.apache.spark.sql.types.StructType()
            .add("partition", "int").add("offset", "long"));
        assertTrue(handOff.handOff);
        assertEquals(0, handOff.partition);
        assertEquals(1, handOff.offset);
        assertEquals(-1, handOff.value);
        KafkaMirrorWriter.Columns full = new KafkaMirrorWriter.Columns(SlotSource.SCHEMA);
        assertEquals(false, full.handOff);
        assertEquals(1, full.value);
        assertEquals(7, full.headers);
    }
}
