package io.mirrorplane.spark;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Function;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InterruptException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One Spark task's records to the target: each keeps its partition, key, value, headers and
 * timestamp. The task's summary lines ("P", "S", "T", see {@link KafkaMirrorWriter}) are only
 * returned once every record is acknowledged; the first failed send fails the task.
 */
final class TaskSink {
    /** Records this JVM's tasks handed to a producer that are not yet acknowledged (or failed). */
    private static final AtomicLong IN_FLIGHT = new AtomicLong();

    private final Producer<byte[], byte[]> producer;
    private final Map<String, String> remoteTopics;
    private final long maxOffsetLag;
    private final Map<String, String> syncState;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final Map<String, PartitionProgress> progress = new LinkedHashMap<>();
    /** Per "topic\tpartition": where its syncs go as they are made (real-time mode), or null. */
    private final Function<String, BiConsumer<Long, Long>> emitters;
    /** The {@link StopGate} generation of the writer this task belongs to. */
    private final long generation;
    private String lastTopic;
    private String lastRemote;
    private UTF8String lastTopicBytes;
    private String lastTopicName;
    private int lastPartition = -1;
    private PartitionProgress lastProgress;
    /** Header names of the rows, as Kafka's strings: a row's string is a view of a buffer reused for the next row. */
    private final NameCache<UTF8String, String> headerNames = new NameCache<>(UTF8String::copy, UTF8String::toString);

    TaskSink(Producer<byte[], byte[]> producer, Map<String, String> remoteTopics, long maxOffsetLag,
             Map<String, String> syncState, long generation) {
        this(producer, remoteTopics, maxOffsetLag, syncState, null, generation);
    }

    TaskSink(Producer<byte[], byte[]> producer, Map<String, String> remoteTopics, long maxOffsetLag,
             Map<String, String> syncState, Function<String, BiConsumer<Long, Long>> emitters, long generation) {
        this.producer = producer;
        this.remoteTopics = remoteTopics;
        this.maxOffsetLag = maxOffsetLag;
        this.syncState = syncState;
        this.emitters = emitters;
        this.generation = generation;
    }

    /** The first failed send's error, or null. */
    Exception failure() {
        return failure.get();
    }

    /** This task's partitions so far, by "topic\tpartition". */
    Map<String, PartitionProgress> progress() {
        return progress;
    }

    boolean failed() {
        return failure.get() != null;
    }

    /** One row of Spark's Kafka source (or the slot source, which has its columns). */
    void send(InternalRow row, KafkaMirrorWriter.Columns columns) {
        UTF8String topic = row.getUTF8String(columns.topic);
        if (!topic.equals(lastTopicBytes)) { // a source's records come a topic at a time: one String per change
            lastTopicBytes = topic.copy(); // the row's bytes are reused for the next record
            lastTopicName = topic.toString();
        }
        send(lastTopicName, row.getInt(columns.partition),
            row.getLong(columns.offset),
            row.isNullAt(columns.timestamp) ? null : Math.floorDiv(row.getLong(columns.timestamp), 1000L), // µs
            row.isNullAt(columns.key) ? null : row.getBinary(columns.key),
            row.isNullAt(columns.value) ? null : row.getBinary(columns.value),
            headers(row, columns.headers));
    }

    /**
     * A record as the slot reader's consumer returned it (real-time mode's hand-off, {@link
     * RecordHandOff}): its key, value and headers go to the producer as they are.
     */
    void send(ConsumerRecord<byte[], byte[]> record) {
        send(record.topic(), record.partition(), record.offset(), record.timestamp() < 0 ? null : record.timestamp(),
            record.key(), record.value(), record.headers());
    }

    private List<Header> headers(InternalRow row, int column) {
        if (column < 0 || row.isNullAt(column)) {
            return null;
        }
        ArrayData source = row.getArray(column);
        List<Header> headers = new ArrayList<>(source.numElements());
        for (int i = 0; i < source.numElements(); i++) {
            InternalRow header = source.getStruct(i, 2);
            headers.add(new RecordHeader(headerNames.get(header.getUTF8String(0)),
                header.isNullAt(1) ? null : header.getBinary(1)));
        }
        return headers;
    }

    void send(String topic, int partition, long offset, Long timestamp, byte[] key, byte[] value,
              Iterable<Header> headers) {
        StopGate.check(generation);
        if (!topic.equals(lastTopic)) {
            lastRemote = remoteTopics.get(topic);
            lastTopic = topic;
            lastProgress = null;
            if (lastRemote == null) {
                throw new IllegalStateException("no remote topic known for source topic " + topic);
            }
        }
        if (lastProgress == null || partition != lastPartition) { // a poll's records come a partition at a time
            lastProgress = progress.computeIfAbsent(topic + "\t" + partition,
                k -> new PartitionProgress(offset, maxOffsetLag, syncState.get(k),
                    emitters == null ? null : emitters.apply(k)));
            lastPartition = partition;
        }
        PartitionProgress p = lastProgress;
        p.records++;
        p.bytes += (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
        p.lastUpstream = offset;
        IN_FLIGHT.incrementAndGet();
        try {
            producer.send(new ProducerRecord<>(lastRemote, partition, timestamp, key, value, headers),
                (metadata, error) -> {
                    IN_FLIGHT.decrementAndGet();
                    if (error != null) {
                        failure.compareAndSet(null, error);
                        p.failed();
                    } else {
                        p.acknowledged(offset, metadata.offset());
                    }
                });
        } catch (RuntimeException e) {
            IN_FLIGHT.decrementAndGet(); // refused before it was queued: no callback follows
            throw e;
        }
    }

    /** Records of this JVM's tasks sent and not yet acknowledged (Connect's source-record-active-count). */
    static long inFlight() {
        return IN_FLIGHT.get();
    }

    /**
     * A task that ends early (its query stopped, its job cancelled: the thread is interrupted) still
     * delivers what it handed to the producer before it ends, so that a plan made from the target's
     * end offsets afterwards sees those records. Never throws: the task's own error is what counts.
     */
    void settle() {
        try {
            flushThroughInterrupts();
        } catch (RuntimeException ignored) {
            // the records' callbacks hold the outcome; nothing to add to the task's failure
        }
    }

    /**
     * Flushes the producer until every record sent is acknowledged or failed, however often the
     * thread is interrupted meanwhile; the interrupt is kept for the caller. Spark interrupts the
     * tasks of a query it stops, also one already ending on its own (the {@link StopGate} refused
     * its next send): a flush cut short would let the task report positions without its last
     * records, and the next query, started from those positions, would send them again.
     */
    private void flushThroughInterrupts() {
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    producer.flush();
                    return;
                } catch (InterruptException e) {
                    interrupted = true;
                    Thread.interrupted(); // the exception set the flag again: clear it to wait on
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits for every acknowledgement; the summary lines, or the first send's failure. */
    Iterator<String> finish() {
        flushThroughInterrupts();
        Exception error = failure.get();
        if (error != null) {
            throw new IllegalStateException("producing to the target cluster failed: " + error, error);
        }
        List<String> summaries = new ArrayList<>();
        progress.forEach((tp, p) -> {
            summaries.add("P\t" + tp + "\t" + p.firstUpstream + "\t" + p.lastUpstream + "\t" + p.lastDownstream()
                + "\t" + p.records + "\t" + p.bytes);
            List<long[]> syncs = p.syncs();
            if (!syncs.isEmpty()) { // one line for all: a batch makes a sync per offset.lag.max records
                StringBuilder line = new StringBuilder(tp.length() + 24 * syncs.size()).append("S\t").append(tp);
                syncs.forEach(sync -> line.append('\t').append(sync[0]).append('\t').append(sync[1]));
                summaries.add(line.toString());
            }
            summaries.add("T\t" + tp + "\t" + p.state());
        });
        return summaries.iterator();
    }
}
