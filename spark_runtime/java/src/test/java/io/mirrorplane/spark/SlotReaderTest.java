package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.unsafe.types.UTF8String;
import org.junit.jupiter.api.Test;

class SlotReaderTest {

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aRecordBecomesTheRowOfSparksKafkaSource() {
        RecordHeaders headers = new RecordHeaders(new RecordHeader[] {new RecordHeader("trace", bytes("t-1"))});
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 3, 42L, 1_700_000_000_123L,
            TimestampType.CREATE_TIME, 1, 1, bytes("k"), bytes("v"), headers, Optional.empty());
        InternalRow row = SlotReader.row(record, UTF8String.fromString("orders"), SlotReader.names());
        assertArrayEquals(bytes("k"), row.getBinary(0));
        assertArrayEquals(bytes("v"), row.getBinary(1));
        assertEquals("orders", row.getUTF8String(2).toString());
        assertEquals(3, row.getInt(3));
        assertEquals(42L, row.getLong(4));
        assertEquals(1_700_000_000_123_000L, row.getLong(5)); // microseconds
        assertEquals(0, row.getInt(6));
        InternalRow header = row.getArray(7).getStruct(0, 2);
        assertEquals("trace", header.getUTF8String(0).toString());
        assertArrayEquals(bytes("t-1"), header.getBinary(1));
    }

    @Test
    void aRecordWithoutHeadersOrKeyHasNulls() {
        InternalRow row = SlotReader.row(new ConsumerRecord<>("orders", 0, 1L, null, bytes("v")),
            UTF8String.fromString("orders"), SlotReader.names());
        assertTrue(row.isNullAt(0));
        assertTrue(row.isNullAt(7));
        assertArrayEquals(bytes("v"), row.getBinary(1));
    }

    @Test
    void theConsumerJoinsNoGroupAndCommitsNothing() {
        Map<String, Object> config = SlotReader.consumerConfig(Map.of("bootstrap.servers", "b:9092", "group.id", "g"));
        assertEquals(false, config.containsKey("group.id"));
        assertEquals("false", config.get("enable.auto.commit"));
        assertEquals("b:9092", config.get("bootstrap.servers"));
    }

    @Test
    void aHeaderNameIsConvertedOnceForTheRecordsThatRepeatIt() {
        NameCache<String, UTF8String> names = SlotReader.names();
        UTF8String[] seen = new UTF8String[2];
        for (int i = 0; i < 2; i++) {
            RecordHeaders headers = new RecordHeaders(new RecordHeader[] {new RecordHeader("trace", bytes("t-" + i))});
            ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 0, i, 0L, TimestampType.CREATE_TIME,
                0, 1, null, bytes("v"), headers, Optional.empty());
            InternalRow header = SlotReader.row(record, UTF8String.fromString("orders"), names).getArray(7).getStruct(0, 2);
            seen[i] = header.getUTF8String(0);
            assertArrayEquals(bytes("t-" + i), header.getBinary(1));
        }
        assertSame(seen[0], seen[1]);
        assertEquals(1, names.size());
    }

    @Test
    void aHandedOffRecordsRowHoldsItsCoordinatesOnly() {
        RecordHeaders headers = new RecordHeaders(new RecordHeader[] {new RecordHeader("trace", bytes("t-1"))});
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>("orders", 3, 42L, 1_700_000_000_123L,
            TimestampType.CREATE_TIME, 1, 1, bytes("k"), bytes("v"), headers, Optional.empty());
        SpecificInternalRow reused = SlotReader.coordinatesRow();
        InternalRow row = SlotReader.coordinates(reused, record, UTF8String.fromString("orders"));
        assertSame(reused, row);
        assertTrue(row.isNullAt(0));
        assertTrue(row.isNullAt(1));
        assertEquals("orders", row.getUTF8String(2).toString());
        assertEquals(3, row.getInt(3));
        assertEquals(42L, row.getLong(4));
        assertEquals(1_700_000_000_123_000L, row.getLong(5));
        assertEquals(0, row.getInt(6));
        assertTrue(row.isNullAt(7));

        ConsumerRecord<byte[], byte[]> next = new ConsumerRecord<>("orders", 1, 7L, null, bytes("w"));
        SlotReader.coordinates(reused, next, UTF8String.fromString("orders"));
        assertEquals(1, row.getInt(3));
        assertEquals(7L, row.getLong(4));
        InternalRow projected = UnsafeProjection.create(SlotSource.SCHEMA).apply(row);
        assertEquals(7L, projected.getLong(4));
        assertTrue(projected.isNullAt(1));
    }
}
