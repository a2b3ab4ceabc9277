package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.junit.jupiter.api.Test;

/** The real-time sink's tasks: each writer opens its query's task, hands it the rows and closes it once. */
class RealTimeMirrorSinkTest {

    /** What a task was told, in order (the test hands the registered task itself to the writers). */
    static final class RecordingTask implements RealTimeTask {
        private static final long serialVersionUID = 1L;
        final List<String> calls = new ArrayList<>();
        private final boolean failAtClose;

        RecordingTask(boolean failAtClose) {
            this.failAtClose = failAtClose;
        }

        @Override
        public void open(long partitionId, long epochId, KafkaMirrorWriter.Columns columns) {
            calls.add("open " + partitionId + " " + epochId + " topic column " + columns.topic);
        }

        @Override
        public void write(InternalRow row) {
            calls.add("write " + row.getLong(4));
        }

        @Override
        public void close(Throwable error) {
            calls.add("close " + (error == null ? "" : error.getMessage()));
            if (failAtClose && error == null) {
                throw new IllegalStateException("producing to the target cluster failed");
            }
        }
    }

    private static DataWriter<InternalRow> writer(String name, int partition, long epoch) {
        SupportsWrite table = (SupportsWrite) new RealTimeMirrorSink().getTable(new StructType(), new Transform[0],
            Map.of("task", name));
        LogicalWriteInfo info = new LogicalWriteInfo() {
            @Override
            public CaseInsensitiveStringMap options() {
                return CaseInsensitiveStringMap.empty();
            }

            @Override
            public String queryId() {
                return "q";
            }

            @Override
            public StructType schema() {
                return SlotSource.SCHEMA;
            }
        };
        return table.newWriteBuilder(info).build().toStreaming().createStreamingWriterFactory(null)
            .createWriter(partition, 0, epoch);
    }

    private static InternalRow offset(long offset) {
        return new GenericInternalRow(new Object[] {null, null, null, 0, offset, 0L, 0, null});
    }

    @Test
    void aTaskIsOpenedGivenItsRowsAndClosedAtItsEpochsEnd() throws Exception {
        RecordingTask task = new RecordingTask(false);
        RealTimeMirrorSink.register("sink-test-commit", task);
        DataWriter<InternalRow> writer = writer("sink-test-commit", 3, 7);
        writer.write(offset(10));
        writer.write(offset(11));
        writer.commit();
        writer.close();
        assertEquals(List.of("open 3 7 topic column 2", "write 10", "write 11", "close "), task.calls);
    }

    @Test
    void aFailedTaskIsClosedWithACauseAndAFailedCommitOnlyOnce() throws Exception {
        RecordingTask failing = new RecordingTask(false);
        RealTimeMirrorSink.register("sink-test-abort", failing);
        DataWriter<InternalRow> aborted = writer("sink-test-abort", 0, 1);
        aborted.abort();
        assertEquals(List.of("open 0 1 topic column 2", "close the task was aborted"), failing.calls);

        RecordingTask failingAtClose = new RecordingTask(true);
        RealTimeMirrorSink.register("sink-test-commit-fails", failingAtClose);
        DataWriter<InternalRow> writer = writer("sink-test-commit-fails", 0, 1);
        assertThrows(IllegalStateException.class, writer::commit);
        writer.abort(); // Spark aborts a writer whose commit threw
        assertEquals(List.of("open 0 1 topic column 2", "close "), failingAtClose.calls);
    }

    @Test
    void aQueryNamingNoRegisteredTaskIsRefusedSayingSo() {
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> new RealTimeMirrorSink().getTable(new StructType(), new Transform[0], Map.of("task", "nobody")));
        assertTrue(error.getMessage().contains("no real-time task registered as nobody"), error.getMessage());
    }
}
