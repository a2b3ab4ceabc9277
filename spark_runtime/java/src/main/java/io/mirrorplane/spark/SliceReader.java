package io.mirrorplane.spark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.TimestampType;
import org.apache.spark.sql.kafka010.KafkaBatchInputPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one task's slice of a micro-batch, exactly the offset ranges Spark's Kafka source planned,
 * with one consumer assigned to all of the slice's partitions (the executor parameters the source
 * itself would use). One consumer fetches every partition in the same requests, and keeps fetching
 * ahead while records are sent: Spark's per-partition reader makes two offset lookups per fetch and
 * a consumer per partition, which made a batch over 1,000 partitions take minutes.
 *
 * <p>Records at or past a partition's planned end are left for the next batch. Records deleted
 * before they were read (retention) fail the batch when the source says failOnDataLoss, and are
 * skipped with a warning otherwise, as Spark's reader does. Consumers are kept per executor between
 * batches, so the next batch's fetches continue where this one stopped.
 */
final class SliceReader {

    private static final Logger LOG = LoggerFactory.getLogger(SliceReader.class);
    private static final Duration POLL = Duration.ofMillis(200);
    private static final Map<Map<String, Object>, Queue<KafkaConsumer<byte[], byte[]>>> IDLE = new ConcurrentHashMap<>();

    private SliceReader() {
    }

    static void copy(SourceRanges.Slice slice, TaskSink sink) {
        if (slice.ranges.isEmpty()) {
            return;
        }
        KafkaBatchInputPartition first = slice.ranges.get(0);
        Map<String, Object> params = first.executorKafkaParams();
        Map<TopicPartition, long[]> bounds = bounds(slice.ranges);
        KafkaConsumer<byte[], byte[]> consumer = take(params);
        boolean reusable = false;
        try {
            consumer.assign(bounds.keySet());
            consumer.resume(consumer.paused());
            bounds.forEach((tp, range) -> consumer.seek(tp, range[0]));
            read(consumer, bounds, first.pollTimeoutMs(), first.failOnDataLoss(), sink);
            reusable = true;
        } finally {
            if (reusable) {
                IDLE.computeIfAbsent(params, k -> new ConcurrentLinkedQueue<>()).add(consumer);
            } else {
                consumer.close(Duration.ofSeconds(5));
            }
        }
    }

    /** Per partition: [first offset, end offset] over its ranges. */
    private static Map<TopicPartition, long[]> bounds(List<KafkaBatchInputPartition> ranges) {
        Map<TopicPartition, long[]> bounds = new HashMap<>();
        for (KafkaBatchInputPartition range : ranges) {
            long from = range.offsetRange().fromOffset();
            long until = range.offsetRange().untilOffset();
            bounds.merge(range.offsetRange().topicPartition(), new long[] {from, until},
                (a, b) -> new long[] {Math.min(a[0], b[0]), Math.max(a[1], b[1])});
        }
        return bounds;
    }

    private static void read(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, long[]> bounds,
                             long stallMs, boolean failOnDataLoss, TaskSink sink) {
        Set<TopicPartition> pending = new HashSet<>(bounds.keySet());
        long lastProgress = System.currentTimeMillis();
        while (!pending.isEmpty() && !sink.failed()) {
            ConsumerRecords<byte[], byte[]> records;
            try {
                records = consumer.poll(POLL);
            } catch (OffsetOutOfRangeException gone) {
                skipDeleted(consumer, gone, failOnDataLoss);
                continue;
            }
            for (TopicPartition tp : records.partitions()) {
                long end = bounds.get(tp)[1];
                for (ConsumerRecord<byte[], byte[]> record : records.records(tp)) {
                    if (record.offset() >= end) {
                        break;
                    }
                    Long timestamp = record.timestampType() == TimestampType.NO_TIMESTAMP_TYPE ? null : record.timestamp();
                    sink.send(tp.topic(), tp.partition(), record.offset(), timestamp, record.key(), record.value(),
                        record.headers());
                }
            }
            List<TopicPartition> done = new ArrayList<>();
            for (TopicPartition tp : pending) {
                if (consumer.position(tp) >= bounds.get(tp)[1]) {
                    done.add(tp);
                }
            }
            if (!done.isEmpty() || !records.isEmpty()) {
                lastProgress = System.currentTimeMillis();
            }
            consumer.pause(done);
            done.forEach(pending::remove);
            if (!pending.isEmpty() && System.currentTimeMillis() - lastProgress > stallMs) {
                endStalled(consumer, bounds, pending, failOnDataLoss);
                lastProgress = System.currentTimeMillis();
            }
        }
    }

    private static void skipDeleted(KafkaConsumer<byte[], byte[]> consumer, OffsetOutOfRangeException gone,
                                    boolean failOnDataLoss) {
        String what = "records of " + gone.offsetOutOfRangePartitions()
            + " were deleted from the source (retention) before they were replicated";
        if (failOnDataLoss) {
            throw new IllegalStateException(what + "; failOnDataLoss is true");
        }
        LOG.warn("{}: continuing from the earliest records left", what);
        consumer.seekToBeginning(gone.offsetOutOfRangePartitions().keySet());
    }

    /** Partitions that cannot reach their planned end (truncated source): data loss, as Spark sees it. */
    private static void endStalled(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, long[]> bounds,
                                   Set<TopicPartition> pending, boolean failOnDataLoss) {
        Map<TopicPartition, Long> ends = consumer.endOffsets(pending);
        for (Iterator<TopicPartition> it = pending.iterator(); it.hasNext();) {
            TopicPartition tp = it.next();
            long end = ends.getOrDefault(tp, Long.MAX_VALUE);
            if (consumer.position(tp) >= end && end < bounds.get(tp)[1]) {
                String what = tp + " ends at offset " + end + ", before the planned " + bounds.get(tp)[1];
                if (failOnDataLoss) {
                    throw new IllegalStateException(what + " (truncated source); failOnDataLoss is true");
                }
                LOG.warn("{} (truncated source): the rest of the range is skipped", what);
                consumer.pause(List.of(tp));
                it.remove();
            }
        }
    }

    /** An idle consumer for these parameters, or a new one; idle consumers of an earlier query are closed. */
    private static KafkaConsumer<byte[], byte[]> take(Map<String, Object> params) {
        for (Map<String, Object> other : IDLE.keySet()) {
            if (!other.equals(params)) { // a restarted query has a new group id: its old consumers are done
                Queue<KafkaConsumer<byte[], byte[]>> stale = IDLE.remove(other);
                KafkaConsumer<byte[], byte[]> consumer;
                while (stale != null && (consumer = stale.poll()) != null) {
                    consumer.close(Duration.ofSeconds(5));
                }
            }
        }
        Queue<KafkaConsumer<byte[], byte[]>> idle = IDLE.get(params);
        KafkaConsumer<byte[], byte[]> consumer = idle == null ? null : idle.poll();
        return consumer != null ? consumer : new KafkaConsumer<>(params);
    }
}
