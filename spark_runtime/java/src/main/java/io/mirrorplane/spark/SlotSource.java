package io.mirrorplane.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Real-time mode's Kafka source with one consumer per task slot ({@link SlotStream}): Spark's own
 * Kafka source reads each partition with a consumer and a task of its own. Options: {@code topics}
 * (comma-separated), {@code slots}, {@code startingOffsets} ("earliest", "latest" or the Kafka
 * source's JSON, -2 earliest and -1 latest), {@code handOff} ("true": each record is handed to the
 * real-time sink on the task's thread, {@link RecordHandOff}, and its row keeps only the record's
 * topic, partition, offset and timestamp) and the consumer's settings as {@code kafka.*}.
 */
public final class SlotSource implements TableProvider {

    /** The columns of Spark's Kafka source with includeHeaders, which the mirror writers read. */
    static final StructType SCHEMA = new StructType(new StructField[] {
        DataTypes.createStructField("key", DataTypes.BinaryType, true),
        DataTypes.createStructField("value", DataTypes.BinaryType, true),
        DataTypes.createStructField("topic", DataTypes.StringType, true),
        DataTypes.createStructField("partition", DataTypes.IntegerType, true),
        DataTypes.createStructField("offset", DataTypes.LongType, true),
        DataTypes.createStructField("timestamp", DataTypes.TimestampType, true),
        DataTypes.createStructField("timestampType", DataTypes.IntegerType, true),
        DataTypes.createStructField("headers", DataTypes.createArrayType(new StructType(new StructField[] {
            DataTypes.createStructField("key", DataTypes.StringType, true),
            DataTypes.createStructField("value", DataTypes.BinaryType, true)}), true), true)});

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SCHEMA;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new SlotTable(new HashMap<>(properties));
    }

    /** The options as a table to read: a stream only. */
    private record SlotTable(Map<String, String> options) implements SupportsRead, ScanBuilder, Scan {

        @Override
        public String name() {
            return "mirrorplane-slots";
        }

        @Override
        public StructType schema() {
            return SCHEMA;
        }

        @Override
        public StructType readSchema() {
            return SCHEMA;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return Set.of(TableCapability.MICRO_BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap scanOptions) {
            return this;
        }

        @Override
        public Scan build() {
            return this;
        }

        @Override
        public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
            return SlotStream.fromOptions(new CaseInsensitiveStringMap(options));
        }
    }
}
