package io.mirrorplane.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.spark.SparkContext;
import org.apache.spark.TaskContext;
import org.apache.spark.rdd.RDD;

import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction2;
import scala.runtime.BoxedUnit;

/**
 * A micro-batch's slices copied as one Spark job, one task per slice, returning the tasks' summary
 * lines.
 *
 * <p>The task function and the result handler are named classes, not lambdas, and the job is run
 * through the one {@code SparkContext.runJob} that wraps nothing: Spark's closure cleaner reads the
 * class file of every closure it is handed with ASM, on every job, and {@code JavaRDD.mapPartitions}
 * and {@code RDD.collect} hand it lambdas of large classes (measured: a sixth of the stream thread's
 * CPU at 5,000 records/s, once per batch).
 */
final class SliceJob {

    private SliceJob() {
    }

    static List<String> run(SparkContext context, List<SourceRanges.Slice> slices, Map<String, String> config,
                            Map<String, String> topics, long maxOffsetLag, Map<String, String> syncState,
                            long generation) {
        ClassTag<SourceRanges.Slice> sliceTag = ClassTag$.MODULE$.apply(SourceRanges.Slice.class);
        RDD<SourceRanges.Slice> rdd = context.parallelize(seq(slices), slices.size(), sliceTag);
        List<Object> partitions = new ArrayList<>();
        for (int i = 0; i < slices.size(); i++) {
            partitions.add(i);
        }
        String[][] results = new String[slices.size()][];
        context.runJob(rdd, new CopySlices(config, topics, maxOffsetLag, syncState, generation), seq(partitions),
            new Collect(results), ClassTag$.MODULE$.apply(String[].class));
        List<String> lines = new ArrayList<>();
        for (String[] result : results) {
            Collections.addAll(lines, result);
        }
        return lines;
    }

    private static <T> Seq<T> seq(List<T> list) {
        return CollectionConverters.asScala(list).toSeq();
    }

    /** One task: its slices read and sent ({@link KafkaMirrorWriter#copy}); its summary lines. */
    static final class CopySlices extends AbstractFunction2<TaskContext, scala.collection.Iterator<SourceRanges.Slice>,
        String[]> implements Serializable {
        private static final long serialVersionUID = 1L;
        private final Map<String, String> config;
        private final Map<String, String> topics;
        private final long maxOffsetLag;
        private final Map<String, String> syncState;
        private final long generation;

        CopySlices(Map<String, String> config, Map<String, String> topics, long maxOffsetLag,
                   Map<String, String> syncState, long generation) {
            this.config = config;
            this.topics = topics;
            this.maxOffsetLag = maxOffsetLag;
            this.syncState = syncState;
            this.generation = generation;
        }

        @Override
        public String[] apply(TaskContext task, scala.collection.Iterator<SourceRanges.Slice> slices) {
            List<String> lines = new ArrayList<>();
            KafkaMirrorWriter.copy(CollectionConverters.asJava(slices), config, topics, maxOffsetLag, syncState,
                    generation)
                .forEachRemaining(lines::add);
            return lines.toArray(new String[0]);
        }
    }

    /** Keeps each task's result by its partition (run on the driver, never serialized). */
    private static final class Collect extends AbstractFunction2<Object, String[], BoxedUnit> {
        private final String[][] results;

        Collect(String[][] results) {
            this.results = results;
        }

        @Override
        public BoxedUnit apply(Object partition, String[] result) {
            results[(Integer) partition] = result;
            return BoxedUnit.UNIT;
        }
    }
}
