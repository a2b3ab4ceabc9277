package io.mirrorplane.spark;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.internal.connector.SupportsStreamingUpdateAsAppend;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Real-time mode's sink: each task's rows go to a {@link RealTimeTask} as Spark's source produced
 * them. A {@code ForeachWriter} would do the same with one more step per record: Spark converts
 * each row to an external {@code Row} for it (new objects for the row, its timestamp and each
 * header), a fifth of the CPU samples of a real-time mirror copying at its limit on two cores.
 *
 * <p>A query names its task with the option {@code task}, under which the driver registered it
 * ({@link #register}): the task carries the producers' settings, credentials included, which the
 * query's options would show in Spark's UI and logs. Spark's allowlist of real-time sinks does not
 * know this one: the session runs with {@code spark.sql.streaming.realTimeMode.allowlistCheck}
 * false ({@link #ALLOWLIST_CHECK}), which turns its check into a warning.
 */
public final class RealTimeMirrorSink implements TableProvider {

    public static final String ALLOWLIST_CHECK = "spark.sql.streaming.realTimeMode.allowlistCheck";
    private static final Map<String, RealTimeTask> TASKS = new ConcurrentHashMap<>();

    /** Registers {@code task} under {@code name}, replacing an earlier one, for the next query naming it. */
    public static void register(String name, RealTimeTask task) {
        TASKS.put(name, task);
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return new StructType(); // a sink: the rows' schema comes with each write
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        String name = properties.get("task");
        RealTimeTask task = name == null ? null : TASKS.get(name);
        if (task == null) {
            throw new IllegalArgumentException("no real-time task registered as " + name
                + " (RealTimeMirrorSink.register before the query starts)");
        }
        return new SinkTable(name, task);
    }

    private record SinkTable(String name, RealTimeTask task) implements SupportsWrite {

        @Override
        public StructType schema() {
            return new StructType();
        }

        @Override
        public Set<TableCapability> capabilities() {
            return Set.of(TableCapability.STREAMING_WRITE);
        }

        @Override
        public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
            KafkaMirrorWriter.Columns columns = new KafkaMirrorWriter.Columns(info.schema());
            return new Builder(task, columns);
        }
    }

    /** Update mode writes each row once, as append mode would: the query has no aggregation. */
    private record Builder(RealTimeTask task, KafkaMirrorWriter.Columns columns)
            implements WriteBuilder, SupportsStreamingUpdateAsAppend {

        @Override
        public Write build() {
            return new Write() {
                @Override
                public StreamingWrite toStreaming() {
                    return new Streaming(new TaskFactory(task, columns));
                }
            };
        }
    }

    /** The driver's side: nothing to do at an epoch's commit or abort; the tasks did it. */
    private record Streaming(TaskFactory factory) implements StreamingWrite {

        @Override
        public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
            return factory;
        }

        @Override
        public void commit(long epochId, WriterCommitMessage[] messages) { }

        @Override
        public void abort(long epochId, WriterCommitMessage[] messages) { }
    }

    /** Serialized with each task: its task is that task's own copy. */
    private record TaskFactory(RealTimeTask task, KafkaMirrorWriter.Columns columns)
            implements StreamingDataWriterFactory {

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
            task.open(partitionId, epochId, columns);
            return new TaskWriter(task);
        }
    }

    private static final class TaskWriter implements DataWriter<InternalRow> {
        private static final WriterCommitMessage DONE = new WriterCommitMessage() { };
        private final RealTimeTask task;
        private boolean closed;

        TaskWriter(RealTimeTask task) {
            this.task = task;
        }

        @Override
        public void write(InternalRow row) {
            task.write(row);
        }

        @Override
        public WriterCommitMessage commit() {
            closed = true;
            task.close(null);
            return DONE;
        }

        @Override
        public void abort() {
            if (!closed) { // a failed commit has closed the task already
                closed = true;
                task.close(new IllegalStateException("the task was aborted"));
            }
        }

        @Override
        public void close() { }
    }
}
