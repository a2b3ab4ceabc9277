package io.mirrorplane.spark;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.api.java.function.VoidFunction2;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.kafka010.KafkaBatchInputPartition;

/**
 * The source connector's micro-batch function, run by Spark's stream thread in the driver: no
 * Python runs per batch. Each batch is written by {@link KafkaMirrorWriter}; the offset syncs it
 * calls for (MM2's per-record rule, and the latest position of a partition once {@code
 * offset.flush.interval.ms} has passed since its last sync, as MM2 promotes at commit time) are
 * written before the function returns, so a batch is only committed once its syncs are
 * acknowledged; each partition's rule state is carried to the next batch here.
 *
 * <p>The Python driver reads what happened from {@link #drain()} on its own schedule: per batch a
 * "B" line (batch id, seconds) followed by the batch's "P" lines, a "G" line (topic, partitions)
 * per source topic that has more partitions than its remote topic is known to have, and "W" with
 * the offset syncs written so far. A batch that
 * reads such a partition waits until the driver reports the remote partitions created ({@link
 * #partitionsReady}).
 */
public final class MicroBatchMirror implements VoidFunction2<Dataset<Row>, Long> {

    private static final long serialVersionUID = 1L;
    private static final long GROWTH_TIMEOUT_MS = 120_000;

    private final HashMap<String, String> producerConfig;
    private final HashMap<String, String> remoteTopics;
    private final int tasksMax;
    private final long maxOffsetLag;
    private final String syncTopic;
    private final HashMap<String, String> syncProducerConfig;
    private final long flushIntervalMs;
    /** Its batches' tasks send until the query is stopped ({@link StopGate}). */
    private final long generation = StopGate.generation();
    /** Sync rule state per "topic\tpartition": previous upstream, previous downstream, last synced downstream. */
    private final Map<String, String> states = new ConcurrentHashMap<>();
    private final Map<String, Long> lastSyncAt = new HashMap<>();
    /** Partitions each remote topic is known to have. */
    private final Map<String, Integer> remotePartitions = new ConcurrentHashMap<>();
    /** Source topics whose remote topic must grow: topic -> partitions wanted. */
    private final Map<String, Integer> wanted = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<String> reports = new LinkedBlockingQueue<>();
    private final AtomicLong syncsWritten = new AtomicLong();

    /**
     * {@code syncTopic} null: offset syncs are off. {@code syncState}: the rule state to start from
     * (see {@link #states()}); {@code partitions}: the remote topics' partition counts by source topic.
     */
    public MicroBatchMirror(Map<String, String> producerConfig, Map<String, String> remoteTopics, int tasksMax,
                            long maxOffsetLag, String syncTopic, Map<String, String> syncProducerConfig,
                            long flushIntervalMs, Map<String, String> syncState,
                            Map<String, ? extends Number> partitions) {
        this.producerConfig = new HashMap<>(producerConfig);
        this.remoteTopics = new HashMap<>(remoteTopics);
        this.tasksMax = tasksMax;
        this.maxOffsetLag = maxOffsetLag;
        this.syncTopic = syncTopic;
        this.syncProducerConfig = new HashMap<>(syncProducerConfig);
        this.flushIntervalMs = flushIntervalMs;
        this.states.putAll(syncState);
        partitions.forEach((topic, count) -> remotePartitions.put(topic, count.intValue()));
    }

    /** spark.mirrorplane.cores as submitted (0: not set; -1: not read yet): read once, since
     * SparkContext.getConf() copies the whole configuration. */
    private int givenCores = -1;

    /** Tasks copying at once: the operator's N of a local[N] master the control plane widened with task
     * threads for real-time mode (spark.mirrorplane.cores), else every task slot. */
    int cores(org.apache.spark.SparkContext context) {
        int slots = context.defaultParallelism();
        if (givenCores < 0) {
            givenCores = context.getConf().getInt("spark.mirrorplane.cores", 0);
        }
        return givenCores > 0 ? Math.min(slots, givenCores) : slots;
    }

    /**
     * A stop that interrupts the batch in a producer's flush reaches Spark as the
     * {@link InterruptedException} it is: Kafka's own InterruptException is a RuntimeException, which
     * Spark would take for the batch function's failure.
     */
    @Override
    public void call(Dataset<Row> batch, Long batchId) throws Exception {
        try {
            copy(batch, batchId);
        } catch (org.apache.kafka.common.errors.InterruptException e) {
            InterruptedException stop = new InterruptedException("the query's stop interrupted the batch: "
                + e.getMessage());
            stop.initCause(e);
            throw stop;
        }
    }

    private void copy(Dataset<Row> batch, Long batchId) throws Exception {
        long started = System.nanoTime();
        List<KafkaBatchInputPartition> ranges = KafkaMirrorWriter.rangesOf(batch);
        awaitRemotePartitions(ranges);
        int slots = Math.max(1, Math.min(tasksMax, cores(batch.sparkSession().sparkContext())));
        List<String> lines = KafkaMirrorWriter.write(batch, ranges, producerConfig, remoteTopics, slots, maxOffsetLag,
            states, generation);
        List<String> progress = new ArrayList<>();
        List<Sync> syncs = absorb(lines, progress, System.currentTimeMillis());
        if (syncTopic != null) {
            writeSyncs(syncs);
        }
        report(batchId, (System.nanoTime() - started) / 1e9, progress);
    }

    /** One offset sync to write: a partition ("topic\tpartition") and its upstream and downstream offsets. */
    record Sync(String key, long upstream, long downstream) {
    }

    /**
     * Takes in a written batch's summary lines (see {@link KafkaMirrorWriter}) at {@code now}: its "P"
     * lines are added to {@code progress}, each partition's rule state is kept for the next batch, and
     * the syncs to write are returned: the writer's, then, when offset syncs are on, those promoted.
     */
    List<Sync> absorb(List<String> lines, List<String> progress, long now) {
        List<Sync> syncs = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("S\t")) {
                addSyncs(line, syncs);
                continue;
            }
            String[] parts = line.split("\t");
            String key = parts[1] + "\t" + parts[2];
            switch (parts[0]) {
                case "P" -> progress.add(line);
                case "T" -> states.put(key, parts[3] + "\t" + parts[4] + "\t" + parts[5]);
                default -> throw new IllegalStateException("unexpected writer line " + line);
            }
        }
        if (syncTopic != null) {
            promoteDue(syncs, now);
        }
        return syncs;
    }

    /** An "S" line's syncs: topic, partition, then upstream and downstream offsets, pair after pair. */
    static void addSyncs(String line, List<Sync> syncs) {
        int topicEnd = line.indexOf('\t', 2);
        int partitionEnd = line.indexOf('\t', topicEnd + 1);
        if (topicEnd < 0 || partitionEnd < 0) {
            throw new IllegalStateException("unexpected writer line " + line);
        }
        String key = line.substring(2, partitionEnd);
        int at = partitionEnd + 1;
        while (at < line.length()) {
            int upstreamEnd = line.indexOf('\t', at);
            if (upstreamEnd < 0) {
                throw new IllegalStateException("an upstream offset without its downstream in " + line);
            }
            int downstreamEnd = line.indexOf('\t', upstreamEnd + 1);
            downstreamEnd = downstreamEnd < 0 ? line.length() : downstreamEnd;
            syncs.add(new Sync(key, Long.parseLong(line, at, upstreamEnd, 10),
                Long.parseLong(line, upstreamEnd + 1, downstreamEnd, 10)));
            at = downstreamEnd + 1;
        }
    }

    /** MM2's commit-time promotion, at most once per partition per flush interval. */
    private void promoteDue(List<Sync> syncs, long now) {
        Set<String> synced = new HashSet<>();
        syncs.forEach(sync -> synced.add(sync.key()));
        synced.forEach(key -> lastSyncAt.put(key, now));
        states.forEach((key, state) -> {
            String[] parts = state.split("\t");
            long upstream = Long.parseLong(parts[0]);
            long downstream = Long.parseLong(parts[1]);
            long lastSynced = Long.parseLong(parts[2]);
            boolean due = now - lastSyncAt.getOrDefault(key, 0L) >= flushIntervalMs;
            if (!synced.contains(key) && downstream != lastSynced && upstream >= 0 && due) {
                syncs.add(new Sync(key, upstream, downstream));
                states.put(key, upstream + "\t" + downstream + "\t" + downstream);
                lastSyncAt.put(key, now);
            }
        });
    }

    /** A batch's "B" line and its "P" lines, for {@link #drain()}. */
    void report(long batchId, double seconds, List<String> progress) {
        StringBuilder report = new StringBuilder("B\t").append(batchId).append('\t').append(seconds);
        progress.forEach(line -> report.append('\n').append(line));
        reports.add(report.toString());
    }

    /** Sends the syncs in order and waits for every acknowledgement; the first failure fails the batch. */
    private void writeSyncs(List<Sync> syncs) {
        if (syncs.isEmpty()) {
            return;
        }
        KafkaProducer<byte[], byte[]> producer = RealTimeMirrorWriter.syncProducer(syncProducerConfig);
        AtomicReference<Exception> failure = new AtomicReference<>();
        for (Sync sync : syncs) {
            String[] tp = sync.key().split("\t");
            byte[] value = ByteBuffer.allocate(16).putLong(sync.upstream()).putLong(sync.downstream()).array();
            producer.send(new ProducerRecord<>(syncTopic, 0, RealTimeMirrorWriter.syncKey(tp[0],
                Integer.parseInt(tp[1])), value), (metadata, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
        }
        producer.flush();
        if (failure.get() != null) {
            throw new IllegalStateException("writing offset syncs to " + syncTopic + " failed: " + failure.get(),
                failure.get());
        }
        syncsWritten.addAndGet(syncs.size());
    }

    /** Waits until every partition the batch reads has its remote partition (the driver creates them). */
    void awaitRemotePartitions(List<KafkaBatchInputPartition> ranges) throws InterruptedException {
        if (ranges == null) {
            return; // the writer writes the batch's rows; partitions are grown on the driver's schedule
        }
        Map<String, Integer> needed = new HashMap<>();
        for (KafkaBatchInputPartition range : ranges) {
            TopicPartition tp = range.offsetRange().topicPartition();
            if (tp.partition() >= remotePartitions.getOrDefault(tp.topic(), Integer.MAX_VALUE)) {
                needed.merge(tp.topic(), tp.partition() + 1, Math::max);
            }
        }
        if (needed.isEmpty()) {
            return;
        }
        wanted.putAll(needed);
        long deadline = System.currentTimeMillis() + GROWTH_TIMEOUT_MS;
        synchronized (remotePartitions) {
            while (needed.entrySet().stream().anyMatch(e -> remotePartitions.getOrDefault(e.getKey(), 0) < e.getValue())) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    throw new IllegalStateException("the remote partitions of " + needed + " were not created within "
                        + TimeUnit.MILLISECONDS.toSeconds(GROWTH_TIMEOUT_MS) + " s");
                }
                remotePartitions.wait(left);
            }
        }
    }

    /** The driver created remote partitions: remote topic partition counts by source topic. */
    public void partitionsReady(Map<String, ? extends Number> partitions) {
        synchronized (remotePartitions) {
            partitions.forEach((topic, count) -> {
                remotePartitions.merge(topic, count.intValue(), Math::max);
                wanted.computeIfPresent(topic, (t, want) -> want > count.intValue() ? want : null);
            });
            remotePartitions.notifyAll();
        }
    }

    /**
     * What happened since the last call, one line each: "B" (batch id, seconds) followed by that
     * batch's "P" lines, then "G" lines, then "W" (syncs written). One string: py4j hands a Java
     * list to Python as a proxy that costs a call per element, and a failed call to end it.
     */
    public String drain() {
        StringBuilder lines = new StringBuilder();
        for (String report = reports.poll(); report != null; report = reports.poll()) {
            lines.append(report).append('\n');
        }
        wanted.forEach((topic, count) -> lines.append("G\t").append(topic).append('\t').append(count).append('\n'));
        return lines.append("W\t").append(syncsWritten.get()).toString();
    }

    /** The sync rule state per "topic\tpartition", to carry to the next query. */
    public Map<String, String> states() {
        return new HashMap<>(states);
    }
}
