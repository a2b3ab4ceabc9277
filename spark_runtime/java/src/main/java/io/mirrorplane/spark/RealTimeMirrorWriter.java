package io.mirrorplane.spark;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.spark.sql.catalyst.InternalRow;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Real-time mode's task ({@link RealTimeMirrorSink}): Spark's long-running tasks hand each record
 * to this writer as they read it, and it is sent at once, keeping its partition, key, value, headers and timestamp. Records
 * never leave the JVM.
 *
 * <p>A task covers one task slot's share of the source partitions ({@link SlotSource}), or one
 * partition with Spark's Kafka source, for one epoch (the trigger's duration). Its offset syncs
 * follow MM2's per-record rule and are written by the task itself as records are acknowledged, as
 * MirrorSourceTask does; at each commit ({@link #commit()}, called by the driver every {@code
 * offset.flush.interval.ms}) and at the end of each epoch the latest acknowledged position of each
 * partition is synced too, as MM2 does when it commits. An epoch is only committed once its task has closed, and closing waits
 * for every acknowledgement: a task whose send failed fails, and the query restarts from the last
 * committed epoch (at least once). The driver's commit reports a failed send at once ({@link
 * #failure()}), without waiting for the task's next record or its epoch's end.
 *
 * <p>What this JVM's tasks copied is kept per partition for the driver ({@link #progress()}): in
 * {@code local[N]} the tasks run in the driver's JVM, so the driver knows every position as it
 * moves rather than once per epoch.
 */
public final class RealTimeMirrorWriter implements RealTimeTask {

    private static final long serialVersionUID = 1L;
    /** Sync rule state per "topic\tpartition", carried from one epoch's task to the next. */
    private static final Map<String, String> STATES = new ConcurrentHashMap<>();
    /** The partitions of the epochs running in this JVM, by "topic\tpartition". */
    private static final Map<String, PartitionProgress> OPEN = new ConcurrentHashMap<>();
    /** Per "topic\tpartition" after this JVM's finished epochs: last upstream, last downstream, records, bytes. */
    private static final Map<String, long[]> DONE = new ConcurrentHashMap<>();
    /** The tasks running in this JVM: the driver's commit looks for a failed send among them. */
    private static final Set<RealTimeMirrorWriter> RUNNING = ConcurrentHashMap.newKeySet();
    private static final Map<Map<String, String>, KafkaProducer<byte[], byte[]>> SYNC_PRODUCERS =
        new ConcurrentHashMap<>();
    private static final LinkedBlockingQueue<Runnable> SYNC_QUEUE = new CountingQueue();
    private static final AtomicLong QUEUED = new AtomicLong();
    private static final AtomicLong SENT = new AtomicLong();
    /** Offset syncs this JVM's tasks wrote, acknowledged. */
    private static final AtomicLong SYNCS_WRITTEN = new AtomicLong();
    private static final Logger LOG = LoggerFactory.getLogger(RealTimeMirrorWriter.class);

    static {
        Thread sender = new Thread(RealTimeMirrorWriter::sendSyncs, "mirrorplane-offset-syncs");
        sender.setDaemon(true);
        sender.start();
    }

    /** A queue that counts what was added, so that a task can wait for its own syncs to leave. */
    private static final class CountingQueue extends LinkedBlockingQueue<Runnable> {
        private static final long serialVersionUID = 1L;

        @Override
        public boolean add(Runnable send) {
            synchronized (this) {
                QUEUED.incrementAndGet();
                return super.add(send);
            }
        }
    }

    private final HashMap<String, String> producerConfig;
    private final HashMap<String, String> remoteTopics;
    private final long maxOffsetLag;
    private final String syncTopic;
    private final HashMap<String, String> syncProducerConfig;
    private final int producers;
    /** Taken on the driver: its tasks send until the query is stopped ({@link StopGate}). */
    private final long generation = StopGate.generation();

    private transient TaskSink sink;
    private transient int known;
    private transient AtomicReference<Exception> syncFailure;
    private transient KafkaMirrorWriter.Columns columns;

    /**
     * {@code syncTopic} null: offset syncs are off. {@code syncProducerConfig}: the connection of
     * the cluster holding the offset-syncs topic. {@code producers}: how many record producers the
     * tasks take in turn ({@link #producerOf}; the source connector passes its task slots, as MM2
     * gives each of its {@code tasks.max} tasks one).
     */
    public RealTimeMirrorWriter(Map<String, String> producerConfig, Map<String, String> remoteTopics,
                                long maxOffsetLag, String syncTopic, Map<String, String> syncProducerConfig,
                                int producers) {
        this.producerConfig = new HashMap<>(producerConfig);
        this.remoteTopics = new HashMap<>(remoteTopics);
        this.maxOffsetLag = maxOffsetLag;
        this.syncTopic = syncTopic;
        this.syncProducerConfig = new HashMap<>(syncProducerConfig);
        this.producers = Math.max(1, producers);
    }

    @Override
    public void open(long partitionId, long epochId, KafkaMirrorWriter.Columns columns) {
        this.columns = columns;
        syncFailure = new AtomicReference<>();
        KafkaProducer<byte[], byte[]> syncs = syncTopic == null ? null : syncProducer(syncProducerConfig);
        sink = new TaskSink(KafkaMirrorWriter.producer(producerConfig, producerOf(partitionId, producers)), remoteTopics,
            maxOffsetLag, STATES,
            syncs == null ? null : key -> emitter(syncs, key), generation);
        known = 0;
        KafkaMirrorWriter.copyStarted();
        RUNNING.add(this);
    }

    @Override
    public void write(InternalRow row) {
        IllegalStateException error = error();
        if (error != null) {
            throw error;
        }
        if (columns.handOff) {
            sink.send(RecordHandOff.take(row.getInt(columns.partition), row.getLong(columns.offset)));
        } else {
            sink.send(row, columns);
        }
        if (sink.progress().size() != known) {
            OPEN.putAll(sink.progress());
            known = sink.progress().size();
        }
    }

    @Override
    public void close(Throwable error) {
        try {
            if (error != null) {
                sink.settle();
                return;
            }
            sink.finish(); // every acknowledgement, or the first send's failure
            if (syncTopic != null) {
                commit(sink.progress().values());
                IllegalStateException syncError = error(null, syncFailure.get(), syncTopic);
                if (syncError != null) {
                    throw syncError;
                }
            }
        } finally {
            RUNNING.remove(this);
            sink.progress().forEach((key, p) -> {
                STATES.put(key, p.state());
                DONE.merge(key, new long[] {p.lastUpstream(), p.lastDownstream(), p.records, p.bytes},
                    RealTimeMirrorWriter::addEpoch);
                OPEN.remove(key, p);
            });
            KafkaMirrorWriter.copyEnded();
        }
    }

    /**
     * The producer of the task reading Spark partition {@code partitionId}, of {@code producers}: in
     * turn, so each sends for as many partitions as the next, one more at most.
     */
    static int producerOf(long partitionId, int producers) {
        return (int) (partitionId % Math.max(1, producers));
    }

    private BiConsumer<Long, Long> emitter(KafkaProducer<byte[], byte[]> syncs, String key) {
        String[] tp = key.split("\t");
        byte[] syncKey = syncKey(tp[0], Integer.parseInt(tp[1]));
        AtomicReference<Exception> failure = syncFailure;
        // Called from the record producer's callback: the sync is queued, never sent (a send can block).
        return (upstream, downstream) -> SYNC_QUEUE.add(() -> syncs.send(
            new ProducerRecord<>(syncTopic, 0, syncKey, ByteBuffer.allocate(16).putLong(upstream).putLong(downstream)
                .array()),
            (metadata, e) -> {
                if (e != null) {
                    failure.compareAndSet(null, e);
                } else {
                    SYNCS_WRITTEN.incrementAndGet();
                }
            }));
    }

    /** Sends the queued offset syncs in order, on a thread of its own. */
    private static void sendSyncs() {
        while (true) {
            try {
                Runnable send = SYNC_QUEUE.take();
                try {
                    send.run();
                } finally {
                    synchronized (SYNC_QUEUE) {
                        SENT.incrementAndGet();
                        SYNC_QUEUE.notifyAll();
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                // the send's own callback carries a delivery failure; this is a refused send
                LOG.warn("an offset sync could not be sent", e);
            }
        }
    }

    /** Waits until the syncs queued so far are handed to their producer (at most 60 s). */
    private static void awaitQueuedSyncs() {
        long target;
        synchronized (SYNC_QUEUE) {
            target = QUEUED.get();
        }
        long deadline = System.currentTimeMillis() + 60_000;
        synchronized (SYNC_QUEUE) {
            while (SENT.get() < target && System.currentTimeMillis() < deadline) {
                try {
                    SYNC_QUEUE.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** This task's failure so far (see {@link #error(Exception, Exception, String)}), or null. */
    private IllegalStateException error() {
        return error(sink.failure(), syncFailure.get(), syncTopic);
    }

    /** A task's failure from its first failed record send, else its first failed offset-sync write; or null. */
    static IllegalStateException error(Exception send, Exception sync, String syncTopic) {
        if (send != null) {
            return new IllegalStateException("producing to the target cluster failed: " + send, send);
        }
        if (sync != null) {
            return new IllegalStateException("writing offset syncs to " + syncTopic + " failed: " + sync, sync);
        }
        return null;
    }

    /**
     * The first failure of a task running in this JVM, or null. The driver asks at each commit: a
     * task fails on its own only at its next record or at its epoch's end, which may be minutes away
     * on a quiet partition.
     */
    public static String failure() {
        for (RealTimeMirrorWriter task : RUNNING) {
            IllegalStateException error = task.error();
            if (error != null) {
                return error.getMessage();
            }
        }
        return null;
    }

    /** MM2's offset-sync key: the topic as a length-prefixed UTF-8 string, then the partition. */
    static byte[] syncKey(String topic, int partition) {
        byte[] name = topic.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(2 + name.length + 4).putShort((short) name.length).put(name).putInt(partition)
            .array();
    }

    static KafkaProducer<byte[], byte[]> syncProducer(Map<String, String> config) {
        return SYNC_PRODUCERS.computeIfAbsent(config, c -> {
            Map<String, Object> props = new HashMap<>(c);
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            props.putIfAbsent(ProducerConfig.ACKS_CONFIG, "all");
            props.putIfAbsent(ProducerConfig.LINGER_MS_CONFIG, "5");
            KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props);
            Runtime.getRuntime().addShutdownHook(new Thread(producer::close));
            return producer;
        });
    }

    /**
     * Per partition copied by this JVM, one line each: "P", topic, partition, last acknowledged
     * upstream offset, its downstream offset, records sent, bytes sent (the two counts since the JVM
     * started). One string: a Java list reaches Python as a proxy costing a call per element.
     */
    public static String progress() {
        return progress(DONE, OPEN);
    }

    /**
     * The {@link #progress()} lines of {@code done}, each partition's totals after its finished
     * epochs (see {@link #addEpoch}), and {@code open}, its running epoch's progress.
     */
    static String progress(Map<String, long[]> done, Map<String, PartitionProgress> open) {
        Map<String, long[]> partitions = new HashMap<>();
        done.forEach((key, totals) -> partitions.put(key, totals.clone()));
        open.forEach((key, p) -> {
            long[] totals = partitions.getOrDefault(key, new long[] {-1, -1, 0, 0});
            if (p.lastUpstream() >= 0) {
                totals[0] = p.lastUpstream();
                totals[1] = p.lastDownstream();
            }
            partitions.put(key, new long[] {totals[0], totals[1], totals[2] + p.records, totals[3] + p.bytes});
        });
        StringBuilder lines = new StringBuilder();
        partitions.forEach((key, p) -> lines.append(lines.length() == 0 ? "" : "\n").append("P\t").append(key)
            .append('\t').append(p[0]).append('\t').append(p[1]).append('\t').append(p[2]).append('\t').append(p[3]));
        return lines.toString();
    }

    /**
     * A partition's totals (last acknowledged upstream offset, its downstream offset, records, bytes)
     * after one more finished epoch's: the epoch's positions unless it acknowledged nothing, and the
     * sums of the counts.
     */
    static long[] addEpoch(long[] totals, long[] epoch) {
        return epoch[0] < 0 ? new long[] {totals[0], totals[1], totals[2] + epoch[2], totals[3] + epoch[3]}
            : new long[] {epoch[0], epoch[1], totals[2] + epoch[2], totals[3] + epoch[3]};
    }

    /**
     * The driver's commit of the running epochs, every {@code offset.flush.interval.ms} as MM2
     * commits its offsets: the latest acknowledged position of each partition is synced when it was
     * not yet, the queued syncs are sent and flushed, and the {@link #progress()} lines are returned
     * (their positions are then durable on the target, and the driver records them). Spark's own
     * epoch can then be long: each of its boundaries holds records back for a moment.
     */
    public static String commit() {
        commit(OPEN.values());
        return progress();
    }

    /** Promotes each partition's latest position (see {@link PartitionProgress#promote}), then sends. */
    static int commit(Iterable<PartitionProgress> open) {
        int promoted = 0;
        for (PartitionProgress p : open) {
            if (p.promote()) {
                promoted++;
            }
        }
        awaitQueuedSyncs();
        SYNC_PRODUCERS.values().forEach(KafkaProducer::flush);
        return promoted;
    }

    /** Offset syncs written by this JVM's tasks since it started. */
    public static long syncsWritten() {
        return SYNCS_WRITTEN.get();
    }

    /**
     * Forgets every partition's sync rule state: the next record of each is synced (a start without
     * checkpoint). The counts stay: the driver adds only their growth.
     */
    public static void reset() {
        STATES.clear();
    }
}
