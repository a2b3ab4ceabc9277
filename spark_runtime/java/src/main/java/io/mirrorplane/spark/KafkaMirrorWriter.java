package io.mirrorplane.spark;

import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.kafka010.KafkaBatchInputPartition;
import org.apache.spark.sql.types.StructType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one micro-batch planned by Spark's Kafka source to the remote topics, record by record,
 * keeping each record's partition, key, value, headers and timestamp (Spark's own Kafka sink
 * drops the timestamp). Records never leave the JVM.
 *
 * <p>The records are read over exactly the offset ranges the source planned and logged for the
 * batch, with the executor parameters the source would use ({@link SliceReader}), and handed to the
 * producer as they come: no Spark row is built for them. The ranges go to at most {@code tasks.max}
 * Spark tasks, whole partitions each, balanced by record count ({@link SourceRanges}). Should a
 * batch's plan not be a scan of the Kafka source, the batch's rows are written instead, from
 * Spark's internal rows.
 *
 * <p>Returned lines, per source topic-partition: "P" progress (first upstream, last upstream, last
 * downstream, records, bytes), "S" the offset syncs to emit, in order (upstream, downstream, upstream,
 * downstream, ...: one line for all, since a batch makes one per {@code offset.lag.max} records, and
 * a line each would be serialized, sent and parsed one by one), and "T" the sync state to pass to the
 * next batch (previous upstream, previous downstream, last synced downstream).
 */
public final class KafkaMirrorWriter {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaMirrorWriter.class);
    /** By configuration and index: a configuration may have several producers (see {@link #producer(Map, int)}). */
    private static final Map<List<Object>, KafkaProducer<byte[], byte[]>> PRODUCERS = new ConcurrentHashMap<>();
    private static volatile boolean warnedAboutRows;
    /** Tasks of this JVM copying records now. */
    private static final AtomicInteger COPIES = new AtomicInteger();

    private KafkaMirrorWriter() {
    }

    /** Writes one micro-batch; its summary lines (see the class). */
    public static List<String> write(Dataset<Row> batch, Map<String, String> producerConfig,
                                     Map<String, String> remoteTopics, int tasks, long maxOffsetLag,
                                     Map<String, String> syncState) {
        return write(batch, rangesOf(batch), producerConfig, remoteTopics, tasks, maxOffsetLag, syncState,
            StopGate.generation());
    }

    /** The batch's Kafka ranges, or null (said once in the log) when its plan is not a scan of the Kafka source. */
    static List<KafkaBatchInputPartition> rangesOf(Dataset<Row> batch) {
        try {
            return SourceRanges.of(batch);
        } catch (SourceRanges.UnexpectedPlan unexpected) {
            if (!warnedAboutRows) {
                warnedAboutRows = true;
                LOG.warn("writing the micro-batch's rows: its plan is not a scan of Spark's Kafka source ({})",
                    unexpected.getMessage());
            }
            return null;
        }
    }

    /**
     * Writes one micro-batch whose ranges were read with {@link #rangesOf} (null: its rows are
     * written) by tasks of {@link StopGate} generation {@code generation}.
     */
    static List<String> write(Dataset<Row> batch, List<KafkaBatchInputPartition> ranges,
                              Map<String, String> producerConfig, Map<String, String> remoteTopics, int tasks,
                              long maxOffsetLag, Map<String, String> syncState, long generation) {
        final HashMap<String, String> config = new HashMap<>(producerConfig);
        final HashMap<String, String> topics = new HashMap<>(remoteTopics);
        final HashMap<String, String> state = new HashMap<>(syncState);
        if (ranges == null) {
            return writeRows(batch, config, topics, tasks, maxOffsetLag, state, generation);
        }
        List<SourceRanges.Slice> slices = SourceRanges.slices(ranges, tasks);
        if (slices.isEmpty()) {
            return Collections.emptyList();
        }
        return SliceJob.run(batch.sparkSession().sparkContext(), slices, config, topics, maxOffsetLag, state,
            generation);
    }

    /** One task: its slice of the batch, read and sent as records come. */
    static Iterator<String> copy(Iterator<SourceRanges.Slice> slices, Map<String, String> config,
                                 Map<String, String> topics, long maxOffsetLag, Map<String, String> syncState,
                                 long generation) {
        TaskSink sink = new TaskSink(producer(config), topics, maxOffsetLag, syncState, generation);
        COPIES.incrementAndGet();
        try {
            while (slices.hasNext()) {
                SliceReader.copy(slices.next(), sink);
            }
            return sink.finish();
        } catch (RuntimeException | Error e) {
            sink.settle();
            throw e;
        } finally {
            copyEnded();
        }
    }

    static void copyStarted() {
        COPIES.incrementAndGet();
    }

    static void copyEnded() {
        if (COPIES.decrementAndGet() == 0) {
            synchronized (COPIES) {
                COPIES.notifyAll();
            }
        }
    }

    /**
     * This JVM's record producers as Kafka Connect reports a source task's: the records sent and not
     * yet acknowledged, and the bytes free in the producers' buffers (their buffer-available-bytes;
     * -1 before any task made a producer). Read by the driver when the tasks run in its JVM (local[N]).
     */
    public static long[] clientGauges() {
        if (PRODUCERS.isEmpty()) {
            return new long[] {TaskSink.inFlight(), -1};
        }
        double available = 0;
        for (KafkaProducer<byte[], byte[]> producer : PRODUCERS.values()) {
            for (Map.Entry<MetricName, ? extends Metric> metric : producer.metrics().entrySet()) {
                MetricName name = metric.getKey();
                if ("buffer-available-bytes".equals(name.name()) && "producer-metrics".equals(name.group())) {
                    available += ((Number) metric.getValue().metricValue()).doubleValue();
                }
            }
        }
        return new long[] {TaskSink.inFlight(), (long) available};
    }

    /**
     * Waits until no task of this JVM is copying (at most {@code timeoutMillis}); whether none is.
     * Called by the driver after stopping its query: the tasks of a stopped query end on their own
     * time, and a resume plan made before they delivered their records would miss them.
     */
    public static boolean quiesce(long timeoutMillis) throws InterruptedException {
        long deadline = System.currentTimeMillis() + timeoutMillis;
        synchronized (COPIES) {
            while (COPIES.get() > 0) {
                long left = deadline - System.currentTimeMillis();
                if (left <= 0) {
                    return false;
                }
                COPIES.wait(left);
            }
        }
        return true;
    }

    // -- the fallback: the batch's rows -------------------------------------------------------

    private static List<String> writeRows(Dataset<Row> batch, HashMap<String, String> config,
                                          HashMap<String, String> topics, int tasks, long maxOffsetLag,
                                          HashMap<String, String> state, long generation) {
        final Columns columns = new Columns(batch.schema());
        JavaRDD<InternalRow> rows = batch.queryExecution().toRdd().toJavaRDD();
        if (tasks > 0 && rows.getNumPartitions() > tasks) {
            rows = rows.coalesce(tasks); // whole Kafka partitions, in order: no shuffle
        }
        return rows.mapPartitions(it -> writeRows(it, columns, config, topics, maxOffsetLag, state, generation))
            .collect();
    }

    static Iterator<String> writeRows(Iterator<InternalRow> rows, Columns columns, Map<String, String> config,
                                      Map<String, String> topics, long maxOffsetLag, Map<String, String> syncState,
                                      long generation) {
        TaskSink sink = new TaskSink(producer(config), topics, maxOffsetLag, syncState, generation);
        COPIES.incrementAndGet();
        try {
            return writeRows(rows, columns, sink);
        } catch (RuntimeException | Error e) {
            sink.settle();
            throw e;
        } finally {
            copyEnded();
        }
    }

    private static Iterator<String> writeRows(Iterator<InternalRow> rows, Columns columns, TaskSink sink) {
        while (rows.hasNext() && !sink.failed()) {
            sink.send(rows.next(), columns);
        }
        return sink.finish();
    }

    /**
     * Positions of the Kafka source's columns in its rows ({@code headers} is -1 without
     * includeHeaders). Rows of just {@link #HAND_OFF_COLUMNS} are a slot reader's whose records are
     * handed off ({@link #handOff}, see {@link RecordHandOff}); the other positions are then -1.
     */
    static final class Columns implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        static final List<String> HAND_OFF_COLUMNS = List.of("partition", "offset");
        final int key;
        final int value;
        final int topic;
        final int partition;
        final int offset;
        final int timestamp;
        final int headers;
        final boolean handOff;

        Columns(StructType schema) {
            handOff = List.of(schema.fieldNames()).equals(HAND_OFF_COLUMNS);
            partition = schema.fieldIndex("partition");
            offset = schema.fieldIndex("offset");
            key = handOff ? -1 : schema.fieldIndex("key");
            value = handOff ? -1 : schema.fieldIndex("value");
            topic = handOff ? -1 : schema.fieldIndex("topic");
            timestamp = handOff ? -1 : schema.fieldIndex("timestamp");
            headers = schema.getFieldIndex("headers").isDefined() ? schema.fieldIndex("headers") : -1;
        }
    }

    // -- producers ------------------------------------------------------------------------------

    static KafkaProducer<byte[], byte[]> producer(Map<String, String> config) {
        return producer(config, 0);
    }

    /**
     * The JVM's producer number {@code index} of {@code config}: real-time mode's tasks, one per
     * partition, take as many producers as the mirror has task slots (see {@link
     * RealTimeMirrorWriter#producerOf}).
     */
    static KafkaProducer<byte[], byte[]> producer(Map<String, String> config, int index) {
        return PRODUCERS.computeIfAbsent(List.of(config, index), key -> newProducer(config));
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
}
