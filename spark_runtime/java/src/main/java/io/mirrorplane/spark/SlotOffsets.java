package io.mirrorplane.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;

/**
 * The slot source's positions: the next offset to read of each source partition, kept in Spark's
 * offset log as the Kafka source keeps its own ({"topic":{"0":42}}), so that a mirror switching
 * between micro-batches (Spark's Kafka source) and real-time mode (this source) resumes from the
 * same checkpoint.
 */
final class SlotOffsets extends Offset implements PartitionOffset {

    private static final long serialVersionUID = 1L;
    private static final ObjectMapper JSON = new ObjectMapper();
    static final Comparator<TopicPartition> ORDER =
        Comparator.comparing(TopicPartition::topic).thenComparingInt(TopicPartition::partition);

    private final HashMap<TopicPartition, Long> next; // serializable: readers hand theirs to the driver

    SlotOffsets(Map<TopicPartition, Long> next) {
        this.next = new HashMap<>(next);
    }

    Map<TopicPartition, Long> next() {
        return next;
    }

    @Override
    public String json() {
        Map<String, Map<String, Long>> byTopic = new TreeMap<>();
        next.forEach((tp, offset) -> byTopic.computeIfAbsent(tp.topic(), t -> new TreeMap<>(
            Comparator.comparingInt(Integer::parseInt))).put(Integer.toString(tp.partition()), offset));
        try {
            return JSON.writeValueAsString(byTopic);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Offsets as Spark's Kafka source writes them (and takes them in startingOffsets). */
    static SlotOffsets fromJson(String json) {
        Map<String, Map<String, Long>> byTopic;
        try {
            byTopic = JSON.readValue(json, new TypeReference<Map<String, Map<String, Long>>>() { });
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a JSON object of topics to partitions to offsets: " + json, e);
        }
        Map<TopicPartition, Long> next = new HashMap<>();
        byTopic.forEach((topic, partitions) -> partitions.forEach(
            (partition, offset) -> next.put(new TopicPartition(topic, Integer.parseInt(partition)), offset)));
        return new SlotOffsets(next);
    }

    /** The positions of every slot's reader at an epoch's end, together. */
    static SlotOffsets merge(PartitionOffset[] slots) {
        Map<TopicPartition, Long> next = new HashMap<>();
        for (PartitionOffset slot : slots) {
            ((SlotOffsets) slot).next.forEach((tp, offset) -> next.merge(tp, offset, Math::max));
        }
        return new SlotOffsets(next);
    }

    /**
     * The partitions dealt to {@code slots} readers in turn, in topic and partition order: each
     * reads as many partitions as the next, one more at most. No slot is empty. The maps are
     * serializable (each travels to its task).
     */
    static List<Map<TopicPartition, Long>> deal(Map<TopicPartition, Long> starts, int slots) {
        if (starts.isEmpty()) {
            return List.of();
        }
        int count = Math.max(1, Math.min(slots, starts.size()));
        List<Map<TopicPartition, Long>> dealt = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            dealt.add(new LinkedHashMap<>());
        }
        int i = 0;
        TreeMap<TopicPartition, Long> ordered = new TreeMap<>(ORDER);
        ordered.putAll(starts);
        for (Map.Entry<TopicPartition, Long> start : ordered.entrySet()) {
            dealt.get(i++ % count).put(start.getKey(), start.getValue());
        }
        return dealt;
    }

    @Override
    public String toString() {
        return json();
    }
}
