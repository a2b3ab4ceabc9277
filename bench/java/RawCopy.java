import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The raw limit of the benchmark: copy a topic to another cluster with plain Kafka clients and tuned
 * batching, keeping partition, key, value, headers and timestamp, with the same delivery guarantees as
 * the mirrors (acks=all, idempotent). One thread per partition group (partition % threads), each with
 * its own consumer and producer; exits once every partition's end offset (taken at start) is copied.
 *
 * <p>Usage: RawCopy SOURCE_BOOTSTRAP TARGET_BOOTSTRAP SOURCE_TOPIC TARGET_TOPIC PARTITIONS THREADS [COMPRESSION]
 * (the producer's compression.type, none by default).
 */
public final class RawCopy {

    private RawCopy() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6 && args.length != 7) {
            System.err.println("usage: RawCopy SOURCE TARGET SOURCE_TOPIC TARGET_TOPIC PARTITIONS THREADS [COMPRESSION]");
            System.exit(2);
        }
        String source = args[0];
        String target = args[1];
        String topic = args[2];
        String remote = args[3];
        int partitions = Integer.parseInt(args[4]);
        int threads = Math.min(Integer.parseInt(args[5]), partitions);
        String compression = args.length == 7 ? args[6] : "none";
        System.out.println("threads=" + threads + " compression=" + compression);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            List<TopicPartition> group = new ArrayList<>();
            for (int p = i; p < partitions; p += threads) {
                group.add(new TopicPartition(topic, p));
            }
            Thread worker = new Thread(() -> {
                try {
                    copy(source, target, group, remote, compression);
                } catch (Throwable error) {
                    failure.compareAndSet(null, error);
                }
            }, "copy-" + i);
            worker.start();
            workers.add(worker);
        }
        for (Thread worker : workers) {
            worker.join();
        }
        if (failure.get() != null) {
            failure.get().printStackTrace();
            System.exit(1);
        }
    }

    static void copy(String source, String target, List<TopicPartition> partitions, String remote, String compression)
            throws Exception {
        Map<String, Object> consumerProps = new HashMap<>();
        consumerProps.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, source);
        consumerProps.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        consumerProps.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, "67108864");
        consumerProps.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, "16777216");
        consumerProps.put(ConsumerConfig.FETCH_MIN_BYTES_CONFIG, "1048576");
        consumerProps.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        consumerProps.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "20000");
        consumerProps.put(ConsumerConfig.RECEIVE_BUFFER_CONFIG, "4194304");
        consumerProps.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        consumerProps.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());

        Map<String, Object> producerProps = new HashMap<>();
        producerProps.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, target);
        producerProps.put(ProducerConfig.ACKS_CONFIG, "all");
        producerProps.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        producerProps.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        producerProps.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        producerProps.put(ProducerConfig.BATCH_SIZE_CONFIG, "1048576");
        producerProps.put(ProducerConfig.BUFFER_MEMORY_CONFIG, "268435456");
        producerProps.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, "16777216");
        producerProps.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        producerProps.put(ProducerConfig.SEND_BUFFER_CONFIG, "4194304");
        producerProps.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        producerProps.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps);
             KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps)) {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            Set<TopicPartition> remaining = new HashSet<>();
            for (TopicPartition tp : partitions) {
                if (consumer.position(tp) < ends.get(tp)) {
                    remaining.add(tp);
                }
            }
            while (!remaining.isEmpty() && failure.get() == null) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    producer.send(new ProducerRecord<>(remote, record.partition(), record.timestamp(), record.key(),
                        record.value(), record.headers()), (metadata, error) -> {
                            if (error != null) {
                                failure.compareAndSet(null, error);
                            }
                        });
                }
                remaining.removeIf(tp -> consumer.position(tp) >= ends.get(tp));
            }
            producer.flush();
        }
        if (failure.get() != null) {
            throw failure.get();
        }
    }
}
