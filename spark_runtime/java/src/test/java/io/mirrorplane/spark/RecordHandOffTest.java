package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RecordHandOffTest {

    private static ConsumerRecord<byte[], byte[]> record(int partition, long offset) {
        return new ConsumerRecord<>("orders", partition, offset, null, "v".getBytes(StandardCharsets.UTF_8));
    }

    @AfterEach
    void forget() {
        RecordHandOff.clear();
    }

    @Test
    void theRecordOfTheRowIsTakenOnce() {
        ConsumerRecord<byte[], byte[]> record = record(3, 42);
        RecordHandOff.put(record);
        assertSame(record, RecordHandOff.take(3, 42));
        IllegalStateException again = assertThrows(IllegalStateException.class, () -> RecordHandOff.take(3, 42));
        assertTrue(again.getMessage().contains("none was handed off"), again.getMessage());
    }

    @Test
    void aRowOutOfStepWithTheReaderFailsSayingWhich() {
        RecordHandOff.put(record(3, 43));
        IllegalStateException error = assertThrows(IllegalStateException.class, () -> RecordHandOff.take(3, 42));
        assertEquals("the row of partition 3 offset 42 reached the real-time sink without its record from the slot "
            + "reader on this thread (it handed off partition 3 offset 43): Spark no longer writes each row as it "
            + "is read", error.getMessage());
        assertThrows(IllegalStateException.class, () -> RecordHandOff.take(2, 43));
    }

    @Test
    void anotherThreadsRecordIsNotTaken() throws Exception {
        RecordHandOff.put(record(0, 1));
        boolean refused = CompletableFuture.supplyAsync(() -> {
            try {
                RecordHandOff.take(0, 1);
                return false;
            } catch (IllegalStateException e) {
                return true;
            }
        }).get();
        assertTrue(refused);
        assertEquals(1, RecordHandOff.take(0, 1).offset());
    }
}
