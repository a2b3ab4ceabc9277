package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.junit.jupiter.api.Test;

class SlotOffsetsTest {

    private static TopicPartition tp(String topic, int partition) {
        return new TopicPartition(topic, partition);
    }

    @Test
    void offsetsAreWrittenAsSparksKafkaSourceWritesThem() {
        SlotOffsets offsets = new SlotOffsets(Map.of(tp("orders", 10), 5L, tp("orders", 2), 7L, tp("audit", 0), 0L));
        assertEquals("{\"audit\":{\"0\":0},\"orders\":{\"2\":7,\"10\":5}}", offsets.json());
        assertEquals(offsets.next(), SlotOffsets.fromJson(offsets.json()).next());
    }

    @Test
    void aMalformedOffsetSaysWhatItExpected() {
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> SlotOffsets.fromJson("[1, 2]"));
        assertEquals(true, error.getMessage().startsWith("not a JSON object of topics to partitions to offsets"));
    }

    @Test
    void slotsMergeIntoOnePositionPerPartition() {
        PartitionOffset[] slots = {
            new SlotOffsets(Map.of(tp("t", 0), 4L, tp("t", 2), 9L)),
            new SlotOffsets(Map.of(tp("t", 1), 3L))};
        assertEquals(Map.of(tp("t", 0), 4L, tp("t", 1), 3L, tp("t", 2), 9L), SlotOffsets.merge(slots).next());
    }

    @Test
    void partitionsAreDealtInTurnAndNoSlotIsEmpty() {
        Map<TopicPartition, Long> starts = Map.of(tp("a", 0), 0L, tp("a", 1), 1L, tp("b", 0), 2L, tp("a", 2), 3L,
            tp("b", 1), 4L);
        List<Map<TopicPartition, Long>> dealt = SlotOffsets.deal(starts, 2);
        assertEquals(List.of(Map.of(tp("a", 0), 0L, tp("a", 2), 3L, tp("b", 1), 4L),
            Map.of(tp("a", 1), 1L, tp("b", 0), 2L)), dealt);
        assertEquals(2, SlotOffsets.deal(Map.of(tp("a", 0), 0L, tp("a", 1), 0L), 8).size());
        assertEquals(List.of(), SlotOffsets.deal(Map.of(), 2));
    }

    @Test
    void aSlotsShareAndItsPositionsTravelToAndFromTasks() throws Exception {
        Map<TopicPartition, Long> share = SlotOffsets.deal(Map.of(tp("a", 0), 0L), 1).get(0);
        try (ObjectOutputStream out = new ObjectOutputStream(new ByteArrayOutputStream())) {
            out.writeObject(new SlotReader.Slot(share, Map.of("bootstrap.servers", "localhost:9092"), true));
            out.writeObject(new SlotOffsets(share));
        }
    }
}
