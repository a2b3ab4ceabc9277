package io.mirrorplane.spark;

import org.apache.kafka.clients.consumer.ConsumerRecord;

/**
 * The record a slot reader read last on this thread, taken by the real-time task that writes it.
 *
 * <p>In real-time mode a task's one thread pulls each row from the slot reader through the query's
 * projection into the sink before it reads the next, so the sink can send the consumer's own
 * {@code ConsumerRecord}: its key, value and headers go to the producer as the consumer decoded
 * them, rather than copied into Spark's row, out of it again and their header names converted both
 * ways (about a third of a real-time task's CPU samples at 100,000 records/s). The rows carry the
 * record's partition and offset, by which the sink checks that it takes the record of the row it
 * was given; a row without its record fails the task.
 */
final class RecordHandOff {

    private static final ThreadLocal<ConsumerRecord<byte[], byte[]>> LAST = new ThreadLocal<>();

    private RecordHandOff() { }

    /** The slot reader's record, handed to Spark as a row on this thread just now. */
    static void put(ConsumerRecord<byte[], byte[]> record) {
        LAST.set(record);
    }

    /** The record of the row at {@code partition} and {@code offset}, once; it is forgotten here. */
    static ConsumerRecord<byte[], byte[]> take(int partition, long offset) {
        ConsumerRecord<byte[], byte[]> record = LAST.get();
        if (record == null || record.partition() != partition || record.offset() != offset) {
            throw new IllegalStateException("the row of partition " + partition + " offset " + offset
                + " reached the real-time sink without its record from the slot reader on this thread ("
                + (record == null ? "none was handed off" : "it handed off partition " + record.partition()
                + " offset " + record.offset()) + "): Spark no longer writes each row as it is read");
        }
        LAST.set(null); // keeps the thread's entry for the next record, where remove() would drop it
        return record;
    }

    /** Forgets this thread's record, if any (a reader closing). */
    static void clear() {
        LAST.remove();
    }
}
