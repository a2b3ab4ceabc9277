package io.mirrorplane.spark;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.PartitionOffset;
import org.apache.spark.sql.connector.read.streaming.SupportsRealTimeRead;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One task slot's reader: a single consumer for all the source partitions dealt to the slot, each
 * record handed to Spark as it arrives, as MirrorSourceTask reads its partitions with one consumer.
 * Rows have the columns of Spark's Kafka source with headers ({@link SlotSource#SCHEMA}).
 */
final class SlotReader implements SupportsRealTimeRead<InternalRow> {

    /**
     * A slot's share of an epoch: where each of its partitions starts, the consumer's settings, and
     * whether its records are handed off ({@link RecordHandOff}) rather than copied into the rows.
     */
    record Slot(Map<TopicPartition, Long> starts, Map<String, Object> consumer, boolean handOff)
        implements InputPartition { }

    static final class Factory implements PartitionReaderFactory {
        private static final long serialVersionUID = 1L;

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new SlotReader((Slot) partition);
        }
    }

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Map<TopicPartition, Long> next;
    private Iterator<ConsumerRecord<byte[], byte[]>> fetched = List.<ConsumerRecord<byte[], byte[]>>of().iterator();
    private final NameCache<String, UTF8String> names = names();
    private TopicPartition lastPartition;
    private InternalRow current;
    /** With the hand-off: the one row, of the record's coordinates, set anew for each record. */
    private final SpecificInternalRow coordinates;

    SlotReader(Slot slot) {
        coordinates = slot.handOff() ? coordinatesRow() : null;
        consumer = new KafkaConsumer<>(consumerConfig(slot.consumer()));
        next = new HashMap<>(slot.starts());
        consumer.assign(new ArrayList<>(next.keySet()));
        next.forEach(consumer::seek);
    }

    /** The consumer's settings: the source connection, group-less, positions kept by Spark only. */
    static Map<String, Object> consumerConfig(Map<String, Object> connection) {
        Map<String, Object> config = new HashMap<>(connection);
        config.remove("group.id"); // assigned partitions: no group to join, nothing committed to Kafka
        config.put("enable.auto.commit", "false");
        config.putIfAbsent("auto.offset.reset", "earliest"); // records gone by retention: read on from the oldest
        config.put("key.deserializer", ByteArrayDeserializer.class.getName());
        config.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return config;
    }

    @Override
    public RecordStatus nextWithTimeout(Long startMs, Long timeoutMs) {
        if (!fetched.hasNext()) {
            fetched = consumer.poll(Duration.ofMillis(Math.max(0, timeoutMs))).iterator();
            if (!fetched.hasNext()) {
                return RecordStatus.newStatusWithoutArrivalTime(false);
            }
        }
        ConsumerRecord<byte[], byte[]> record = fetched.next();
        if (lastPartition == null || lastPartition.partition() != record.partition()
                || !lastPartition.topic().equals(record.topic())) { // a poll's records come a partition at a time
            lastPartition = new TopicPartition(record.topic(), record.partition());
        }
        next.put(lastPartition, record.offset() + 1);
        if (coordinates != null) {
            RecordHandOff.put(record);
            current = coordinates(coordinates, record, names.get(record.topic()));
        } else {
            current = row(record, names.get(record.topic()), names);
        }
        return record.timestampType() == TimestampType.NO_TIMESTAMP_TYPE
            ? RecordStatus.newStatusWithoutArrivalTime(true)
            : RecordStatus.newStatusWithArrivalTimeMs(record.timestamp());
    }

    @Override
    public boolean next() {
        return nextWithTimeout(System.currentTimeMillis(), 0L).hasRecord();
    }

    @Override
    public InternalRow get() {
        return current;
    }

    @Override
    public PartitionOffset getOffset() {
        return new SlotOffsets(next);
    }

    @Override
    public void close() {
        RecordHandOff.clear();
        consumer.close(Duration.ZERO);
    }

    /** Topic and header names as Spark's strings, each converted once. */
    static NameCache<String, UTF8String> names() {
        return new NameCache<>(name -> name, UTF8String::fromString);
    }

    /** A row of {@link SlotSource#SCHEMA} whose key, value and headers stay null: the hand-off's. */
    static SpecificInternalRow coordinatesRow() {
        SpecificInternalRow row = new SpecificInternalRow(SlotSource.SCHEMA);
        for (int i = 0; i < SlotSource.SCHEMA.size(); i++) {
            row.setNullAt(i);
        }
        return row;
    }

    /**
     * {@code row} set to the record's topic, partition, offset and timestamp; its key, value and
     * headers are handed off ({@link RecordHandOff}), not copied.
     */
    static InternalRow coordinates(SpecificInternalRow row, ConsumerRecord<byte[], byte[]> record, UTF8String topic) {
        row.update(2, topic);
        row.setInt(3, record.partition());
        row.setLong(4, record.offset());
        row.setLong(5, record.timestamp() * 1000L);
        row.setInt(6, record.timestampType().id);
        return row;
    }

    /** A record as Spark's Kafka source gives it: key, value, topic, partition, offset, timestamp, its type, headers. */
    static InternalRow row(ConsumerRecord<byte[], byte[]> record, UTF8String topic,
                           NameCache<String, UTF8String> headerNames) {
        Header[] headers = record.headers().toArray();
        GenericArrayData headerArray = null;
        if (headers.length > 0) {
            Object[] pairs = new Object[headers.length];
            for (int i = 0; i < headers.length; i++) {
                pairs[i] = new GenericInternalRow(new Object[] {headerNames.get(headers[i].key()), headers[i].value()});
            }
            headerArray = new GenericArrayData(pairs);
        }
        return new GenericInternalRow(new Object[] {
            record.key(), record.value(), topic, record.partition(), record.offset(),
            record.timestamp() * 1000L, record.timestampType().id, headerArray});
    }
}
