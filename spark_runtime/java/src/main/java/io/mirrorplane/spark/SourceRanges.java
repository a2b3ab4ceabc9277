package io.mirrorplane.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.TopicPartition;
import org.apache.spark.Dependency;
import org.apache.spark.OneToOneDependency;
import org.apache.spark.Partition;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.execution.RDDScanExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanExec;
import org.apache.spark.sql.execution.datasources.v2.DataSourceRDD;
import org.apache.spark.sql.execution.datasources.v2.DataSourceRDDPartition;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanExecBase;
import org.apache.spark.sql.kafka010.KafkaBatchInputPartition;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The Kafka offset ranges Spark's Kafka source planned for one micro-batch, read from the batch's
 * physical plan, and their split into task slices.
 *
 * <p>A slice holds whole source partitions (every range of a partition, in offset order), so each
 * partition is written by one task, in order. Partitions go to slices largest first, each to the
 * slice with the fewest records so far: the slices end together.
 */
final class SourceRanges {

    /** One slice: the ranges one Spark task copies, in order. */
    static final class Slice implements Serializable {
        final List<KafkaBatchInputPartition> ranges = new ArrayList<>();
        long records;
    }

    private SourceRanges() {
    }

    /**
     * The batch's Kafka ranges; throws {@link UnexpectedPlan} unless its plan reads exactly one Kafka
     * source scan. PySpark's foreachBatch hands over the batch as a scan of the query's RDD, so the
     * search follows RDD lineage (one-to-one dependencies only) as well as plan nodes.
     */
    static List<KafkaBatchInputPartition> of(Dataset<Row> batch) {
        SparkPlan plan = batch.queryExecution().executedPlan();
        List<InputPartition> inputs = new ArrayList<>();
        int scans = collect(plan, inputs);
        if (scans != 1) {
            throw new UnexpectedPlan(scans + " data source scans in " + plan.treeString());
        }
        List<KafkaBatchInputPartition> ranges = new ArrayList<>();
        for (InputPartition input : inputs) {
            if (!(input instanceof KafkaBatchInputPartition kafka)) {
                throw new UnexpectedPlan("an input partition of type " + input.getClass().getName());
            }
            ranges.add(kafka);
        }
        return ranges;
    }

    /** The batch's plan is not what this class knows how to read. */
    static final class UnexpectedPlan extends RuntimeException {
        UnexpectedPlan(String message) {
            super(message);
        }
    }

    private static int collect(SparkPlan plan, List<InputPartition> inputs) {
        int scans = 0;
        if (plan instanceof DataSourceV2ScanExecBase scan) {
            inputs.addAll(CollectionConverters.asJava(scan.inputPartitions()));
            scans++;
        } else if (plan instanceof RDDScanExec scan) {
            scans += collect(scan.rdd(), inputs);
        } else if (plan instanceof AdaptiveSparkPlanExec adaptive) {
            scans += collect(adaptive.inputPlan(), inputs); // adaptive execution keeps its plan beside the tree
        }
        for (SparkPlan child : CollectionConverters.asJava(plan.children())) {
            scans += collect(child, inputs);
        }
        return scans;
    }

    private static int collect(RDD<?> rdd, List<InputPartition> inputs) {
        if (rdd instanceof DataSourceRDD) {
            for (Partition partition : rdd.partitions()) {
                // one input partition per RDD partition, or none (an empty partition of a grouped scan)
                scala.Option<InputPartition> input = ((DataSourceRDDPartition) partition).inputPartition();
                if (input.isDefined()) {
                    inputs.add(input.get());
                }
            }
            return 1;
        }
        int scans = 0;
        for (Dependency<?> dependency : CollectionConverters.asJava(rdd.dependencies())) {
            if (!(dependency instanceof OneToOneDependency)) {
                throw new UnexpectedPlan("a " + dependency.getClass().getSimpleName() + " in the batch's lineage");
            }
            scans += collect(dependency.rdd(), inputs);
        }
        return scans;
    }

    /** At most {@code slots} slices of whole partitions, balanced by record count; none without records. */
    static List<Slice> slices(List<KafkaBatchInputPartition> ranges, int slots) {
        Map<TopicPartition, List<KafkaBatchInputPartition>> byPartition = new LinkedHashMap<>();
        for (KafkaBatchInputPartition range : ranges) {
            if (range.offsetRange().untilOffset() > range.offsetRange().fromOffset()) {
                byPartition.computeIfAbsent(range.offsetRange().topicPartition(), k -> new ArrayList<>()).add(range);
            }
        }
        List<List<KafkaBatchInputPartition>> partitions = new ArrayList<>(byPartition.values());
        partitions.forEach(list -> list.sort(Comparator.comparingLong(r -> r.offsetRange().fromOffset())));
        partitions.sort(Comparator.comparingLong(SourceRanges::records).reversed());
        List<Slice> slices = new ArrayList<>();
        for (int i = 0; i < Math.min(Math.max(slots, 1), partitions.size()); i++) {
            slices.add(new Slice());
        }
        for (List<KafkaBatchInputPartition> partition : partitions) {
            Slice lightest = slices.stream().min(Comparator.comparingLong(s -> s.records)).orElseThrow();
            lightest.ranges.addAll(partition);
            lightest.records += records(partition);
        }
        return slices;
    }

    private static long records(List<KafkaBatchInputPartition> ranges) {
        return ranges.stream().mapToLong(r -> r.offsetRange().untilOffset() - r.offsetRange().fromOffset()).sum();
    }
}
