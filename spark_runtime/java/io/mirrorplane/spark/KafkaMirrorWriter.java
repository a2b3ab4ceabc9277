package io.mirrorplane.spark;

import java.io.Serializable;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * Writes one micro-batch read by Spark's Kafka source to the remote topics, record by record,
 * keeping each record's partition, key, value, headers and timestamp (Spark's own Kafka sink
 * drops the timestamp). Records never leave the JVM.
 *
 * <p>It also applies MirrorMaker 2's offset-sync rule (MirrorSourceTask's PartitionState) to every
 * acknowledged record, where the real downstream offset is known. Returned lines, per source
 * topic-partition: "P" progress (first upstream, last upstream, last downstream, records, bytes),
 * "S" offset syncs to emit (upstream, downstream), and "T" the sync state to pass to the next batch
 * (previous upstream, previous downstream, last synced downstream).
 */
public final class KafkaMirrorWriter {

    private static final Map<Map<String, String>, KafkaProducer<byte[], byte[]>> PRODUCERS = new ConcurrentHashMap<>();

    private KafkaMirrorWriter() {
    }

    /** Entry point called by the Python driver from foreachBatch. */
    public static List<String> write(Dataset<Row> batch, Map<String, String> producerConfig,
                                     Map<String, String> remoteTopics, int tasks, long maxOffsetLag,
                                     Map<String, String> syncState) {
        final HashMap<String, String> config = new HashMap<>(producerConfig);
        final HashMap<String, String> topics = new HashMap<>(remoteTopics);
        Dataset<Row> rows = batch.select("topic", "partition", "offset", "timestamp", "key", "value", "headers");
        if (tasks > 0 && rows.rdd().getNumPartitions() > tasks) {
            // Coalesce keeps each Kafka partition whole and in order: no shuffle.
            rows = rows.coalesce(tasks);
        }
        final HashMap<String, String> state = new HashMap<>(syncState);
        return rows.toJavaRDD().mapPartitions(it -> writePartition(it, config, topics, maxOffsetLag, state)).collect();
    }

    static Iterator<String> writePartition(Iterator<Row> rows, Map<String, String> config,
                                           Map<String, String> topics, long maxOffsetLag,
                                           Map<String, String> syncState) {
        KafkaProducer<byte[], byte[]> producer = PRODUCERS.computeIfAbsent(config, KafkaMirrorWriter::newProducer);
        AtomicReference<Exception> failure = new AtomicReference<>();
        Map<String, Progress> progress = new LinkedHashMap<>();
        while (rows.hasNext() && failure.get() == null) {
            Row row = rows.next();
            String topic = row.getString(0);
            int partition = row.getInt(1);
            long offset = row.getLong(2);
            String remote = topics.get(topic);
            if (remote == null) {
                throw new IllegalStateException("no remote topic known for source topic " + topic);
            }
            byte[] key = row.isNullAt(4) ? null : (byte[]) row.get(4);
            byte[] value = row.isNullAt(5) ? null : (byte[]) row.get(5);
            ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(
                remote, partition, timestampMillis(row.get(3)), key, value, headers(row));
            Progress p = progress.computeIfAbsent(topic + "\t" + partition,
                k -> new Progress(offset, maxOffsetLag, syncState.get(k)));
            p.records++;
            p.bytes += (key == null ? 0 : key.length) + (value == null ? 0 : value.length);
            p.lastUpstream = offset;
            producer.send(record, (metadata, error) -> {
                if (error != null) {
                    failure.compareAndSet(null, error);
                } else {
                    p.acknowledged(offset, metadata.offset());
                }
            });
        }
        producer.flush();
        Exception error = failure.get();
        if (error != null) {
            throw new IllegalStateException("producing to the target cluster failed: " + error, error);
        }
        List<String> summaries = new ArrayList<>();
        progress.forEach((tp, p) -> {
            summaries.add("P\t" + tp + "\t" + p.firstUpstream + "\t" + p.lastUpstream + "\t" + p.lastDownstream()
                + "\t" + p.records + "\t" + p.bytes);
            for (long[] sync : p.syncs()) {
                summaries.add("S\t" + tp + "\t" + sync[0] + "\t" + sync[1]);
            }
            summaries.add("T\t" + tp + "\t" + p.state());
        });
        return summaries.iterator();
    }

    private static Long timestampMillis(Object value) {
        if (value instanceof Timestamp ts) {
            return ts.getTime();
        }
        if (value instanceof Instant instant) {
            return instant.toEpochMilli();
        }
        return null;
    }

    private static List<Header> headers(Row row) {
        if (row.isNullAt(6)) {
            return null;
        }
        List<Row> source = row.getList(6);
        List<Header> headers = new ArrayList<>(source.size());
        for (Row header : source) {
            headers.add(new RecordHeader(header.getString(0), header.isNullAt(1) ? null : (byte[]) header.get(1)));
        }
        return headers;
    }

    private static KafkaProducer<byte[], byte[]> newProducer(Map<String, String> config) {
        Map<String, Object> props = new HashMap<>(config);
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
        Runtime.getRuntime().addShutdownHook(new Thread(producer::close));
        return producer;
    }

    /** Drops every cached producer, so the next batch connects afresh (used after a failure). */
    public static void reset() {
        PRODUCERS.values().forEach(KafkaProducer::close);
        PRODUCERS.clear();
    }

    private static final class Progress implements Serializable {
        final long firstUpstream;
        final long maxOffsetLag;
        long lastUpstream = -1;
        long records;
        long bytes;
        // MM2's PartitionState, updated in acknowledgement order (the send order of one partition).
        private long previousUpstream = -1;
        private long previousDownstream = -1;
        private long lastSyncDownstream = -1;
        private final List<long[]> syncs = new ArrayList<>();

        Progress(long firstUpstream, long maxOffsetLag, String state) {
            this.firstUpstream = firstUpstream;
            this.maxOffsetLag = maxOffsetLag;
            if (state != null) {
                String[] parts = state.split("\t");
                previousUpstream = Long.parseLong(parts[0]);
                previousDownstream = Long.parseLong(parts[1]);
                lastSyncDownstream = Long.parseLong(parts[2]);
            }
        }

        synchronized void acknowledged(long upstream, long downstream) {
            boolean noPreviousSync = previousUpstream == -1;
            // a translated offset lands one past its sync, hence the + 1
            boolean translationTooStale = downstream - (lastSyncDownstream + 1) >= maxOffsetLag;
            boolean skippedUpstreamRecord = upstream - previousUpstream != 1;
            boolean truncatedDownstream = downstream < previousDownstream;
            if (noPreviousSync || translationTooStale || skippedUpstreamRecord || truncatedDownstream) {
                lastSyncDownstream = downstream;
                syncs.add(new long[] {upstream, downstream});
            }
            previousUpstream = upstream;
            previousDownstream = downstream;
        }

        synchronized long lastDownstream() {
            return previousDownstream;
        }

        synchronized List<long[]> syncs() {
            return new ArrayList<>(syncs);
        }

        synchronized String state() {
            return previousUpstream + "\t" + previousDownstream + "\t" + lastSyncDownstream;
        }
    }
}
