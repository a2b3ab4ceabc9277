package io.mirrorplane.spark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeMode;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The slot source's stream, in real-time mode only: each epoch deals the source partitions to
 * {@code slots} readers ({@link SlotOffsets#deal}), each with one consumer. Partitions added to a
 * topic are read from their beginning from the next epoch on.
 */
final class SlotStream implements MicroBatchStream, SupportsRealTimeMode {

    static final long EARLIEST = -2;
    static final long LATEST = -1;
    private static final Duration METADATA_TIMEOUT = Duration.ofSeconds(60);

    private final List<String> topics;
    private final int slots;
    private final String startingOffsets;
    private final Map<String, Object> consumer;
    private final boolean handOff;
    private KafkaConsumer<byte[], byte[]> metadata; // the driver's, for partitions and their ends

    SlotStream(List<String> topics, int slots, String startingOffsets, Map<String, Object> consumer, boolean handOff) {
        this.topics = List.copyOf(topics);
        this.slots = Math.max(1, slots);
        this.startingOffsets = startingOffsets;
        this.consumer = Map.copyOf(consumer);
        this.handOff = handOff;
    }

    static SlotStream fromOptions(CaseInsensitiveStringMap options) {
        String topics = options.get("topics");
        if (topics == null || topics.isBlank()) {
            throw new IllegalArgumentException("the slot source needs its topics (option topics)");
        }
        Map<String, Object> consumer = new HashMap<>();
        options.asCaseSensitiveMap().forEach((key, value) -> {
            if (key.startsWith("kafka.")) {
                consumer.put(key.substring("kafka.".length()), value);
            }
        });
        return new SlotStream(List.of(topics.split(",")), options.getInt("slots", 1),
            options.getOrDefault("startingOffsets", "earliest"), consumer, options.getBoolean("handOff", false));
    }

    @Override
    public Offset initialOffset() {
        Map<TopicPartition, Long> starts = new TreeMap<>(SlotOffsets.ORDER);
        Map<TopicPartition, Long> given = switch (startingOffsets) {
            case "earliest" -> Map.of();
            case "latest" -> null;
            default -> SlotOffsets.fromJson(startingOffsets).next();
        };
        for (TopicPartition tp : partitions()) {
            long offset = given == null ? LATEST : given.getOrDefault(tp, EARLIEST);
            starts.put(tp, offset);
        }
        return new SlotOffsets(resolve(starts));
    }

    @Override
    public Offset deserializeOffset(String json) {
        return SlotOffsets.fromJson(json);
    }

    @Override
    public void prepareForRealTimeMode() { }

    @Override
    public InputPartition[] planInputPartitions(Offset start) {
        Map<TopicPartition, Long> starts = new TreeMap<>(SlotOffsets.ORDER);
        starts.putAll(((SlotOffsets) start).next());
        for (TopicPartition tp : partitions()) {
            starts.putIfAbsent(tp, EARLIEST); // added since the last epoch
        }
        List<InputPartition> dealt = new ArrayList<>();
        for (Map<TopicPartition, Long> share : SlotOffsets.deal(resolve(starts), slots)) {
            dealt.add(new SlotReader.Slot(share, consumer, handOff));
        }
        return dealt.toArray(new InputPartition[0]);
    }

    @Override
    public InputPartition[] planInputPartitions(Offset start, Offset end) {
        throw new UnsupportedOperationException("the slot source reads in real-time mode only");
    }

    @Override
    public Offset mergeOffsets(PartitionOffset[] offsets) {
        return SlotOffsets.merge(offsets);
    }

    @Override
    public Offset latestOffset() {
        Map<TopicPartition, Long> ends = new TreeMap<>(SlotOffsets.ORDER);
        metadata().endOffsets(partitions(), METADATA_TIMEOUT).forEach(ends::put);
        return new SlotOffsets(ends);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new SlotReader.Factory();
    }

    @Override
    public void commit(Offset end) { }

    @Override
    public synchronized void stop() {
        if (metadata != null) {
            metadata.close(Duration.ZERO);
            metadata = null;
        }
    }

    /** The topics' partitions now. */
    private List<TopicPartition> partitions() {
        List<TopicPartition> found = new ArrayList<>();
        for (String topic : topics) {
            List<PartitionInfo> infos = metadata().partitionsFor(topic, METADATA_TIMEOUT);
            if (infos != null) {
                infos.forEach(info -> found.add(new TopicPartition(topic, info.partition())));
            }
        }
        return found;
    }

    /** {@code starts} with EARLIEST and LATEST replaced by the partitions' first and next offsets. */
    private Map<TopicPartition, Long> resolve(Map<TopicPartition, Long> starts) {
        List<TopicPartition> earliest = new ArrayList<>();
        List<TopicPartition> latest = new ArrayList<>();
        starts.forEach((tp, offset) -> {
            if (offset == EARLIEST) {
                earliest.add(tp);
            } else if (offset == LATEST) {
                latest.add(tp);
            }
        });
        Map<TopicPartition, Long> resolved = new TreeMap<>(SlotOffsets.ORDER);
        resolved.putAll(starts);
        if (!earliest.isEmpty()) {
            resolved.putAll(metadata().beginningOffsets(earliest, METADATA_TIMEOUT));
        }
        if (!latest.isEmpty()) {
            resolved.putAll(metadata().endOffsets(latest, METADATA_TIMEOUT));
        }
        return resolved;
    }

    private synchronized KafkaConsumer<byte[], byte[]> metadata() {
        if (metadata == null) {
            metadata = new KafkaConsumer<>(SlotReader.consumerConfig(consumer));
        }
        return metadata;
    }
}
