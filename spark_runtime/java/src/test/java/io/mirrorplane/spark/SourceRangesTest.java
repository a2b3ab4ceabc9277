package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.sql.kafka010.KafkaBatchInputPartition;
import org.apache.spark.sql.kafka010.KafkaOffsetRange;
import org.junit.jupiter.api.Test;

/** A micro-batch's Kafka ranges split into task slices of whole partitions, balanced by records. */
class SourceRangesTest {

    private static KafkaBatchInputPartition range(String topic, int partition, long from, long until) {
        KafkaOffsetRange offsets = new KafkaOffsetRange(new TopicPartition(topic, partition), from, until,
            scala.Option.empty());
        return new KafkaBatchInputPartition(offsets, Map.of(), 1_000, true, false);
    }

    /** A slice as "topic-partition:from-until" per range, in order. */
    private static List<String> describe(SourceRanges.Slice slice) {
        List<String> ranges = new ArrayList<>();
        for (KafkaBatchInputPartition range : slice.ranges) {
            ranges.add(range.offsetRange().topicPartition() + ":" + range.offsetRange().fromOffset() + "-"
                + range.offsetRange().untilOffset());
        }
        return ranges;
    }

    @Test
    void partitionsGoLargestFirstToTheLightestSlice() {
        List<SourceRanges.Slice> slices = SourceRanges.slices(List.of(
            range("a", 0, 0, 10), range("a", 1, 0, 50), range("a", 2, 0, 30), range("a", 3, 0, 25)), 2);
        assertEquals(2, slices.size());
        // 50 -> first, 30 -> second, 25 -> second (30 < 50), 10 -> first (55 > 50)
        assertEquals(List.of("a-1:0-50", "a-0:0-10"), describe(slices.get(0)));
        assertEquals(List.of("a-2:0-30", "a-3:0-25"), describe(slices.get(1)));
        assertEquals(60, slices.get(0).records);
        assertEquals(55, slices.get(1).records);
    }

    @Test
    void aPartitionsRangesStayTogetherInOffsetOrder() {
        List<SourceRanges.Slice> slices = SourceRanges.slices(List.of(
            range("a", 0, 200, 300), range("b", 0, 0, 150), range("a", 0, 0, 100), range("a", 0, 100, 200)), 4);
        assertEquals(2, slices.size(), "no more slices than partitions");
        assertEquals(List.of("a-0:0-100", "a-0:100-200", "a-0:200-300"), describe(slices.get(0)));
        assertEquals(List.of("b-0:0-150"), describe(slices.get(1)));
        assertEquals(300, slices.get(0).records);
    }

    @Test
    void emptyRangesAreLeftOutAndAnEmptyBatchHasNoSlice() {
        assertTrue(SourceRanges.slices(List.of(range("a", 0, 7, 7), range("a", 1, 3, 3)), 2).isEmpty());
        assertTrue(SourceRanges.slices(List.of(), 2).isEmpty());

        List<SourceRanges.Slice> slices = SourceRanges.slices(List.of(range("a", 0, 7, 7), range("a", 1, 3, 5)), 2);
        assertEquals(1, slices.size());
        assertEquals(List.of("a-1:3-5"), describe(slices.get(0)));
    }

    @Test
    void noSlotsAtAllStillMakeOneSlice() {
        List<SourceRanges.Slice> slices = SourceRanges.slices(List.of(range("a", 0, 0, 1), range("a", 1, 0, 2)), 0);
        assertEquals(1, slices.size());
        assertEquals(3, slices.get(0).records);
        assertEquals(List.of("a-1:0-2", "a-0:0-1"), describe(slices.get(0)));
    }

    @Test
    void everyRecordOfTheBatchIsInExactlyOneSlice() {
        List<KafkaBatchInputPartition> ranges = new ArrayList<>();
        long records = 0;
        for (int p = 0; p < 40; p++) {
            long size = (p * 37L) % 101 + 1;
            ranges.add(range("t", p, 1_000, 1_000 + size));
            records += size;
        }
        List<SourceRanges.Slice> slices = SourceRanges.slices(ranges, 3);
        assertEquals(3, slices.size());
        assertEquals(records, slices.stream().mapToLong(s -> s.records).sum());
        assertEquals(40, slices.stream().mapToInt(s -> s.ranges.size()).sum());
        long heaviest = slices.stream().mapToLong(s -> s.records).max().orElseThrow();
        long lightest = slices.stream().mapToLong(s -> s.records).min().orElseThrow();
        assertTrue(heaviest - lightest <= 101, "slices end together: " + heaviest + " vs " + lightest);
    }
}
