package io.mirrorplane.spark;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.TaskKilledException;

/**
 * Keeps a stopped query's tasks from sending in {@code local[N]} mode, where they run in the
 * driver's JVM.
 *
 * <p>Stopping a query cancels its job, but Spark delivers the kills to running tasks
 * asynchronously: a task launched just before the stop may still read and send a poll's records
 * after {@code query.stop()} and {@link KafkaMirrorWriter#quiesce} have returned, and the
 * connector would report PAUSED while records still arrive. A writer takes the gate's generation
 * when the driver creates it; once the driver {@link #close}s the gate, writers of earlier
 * generations refuse to send. In an executor's own JVM the gate is never closed: it admits all.
 *
 * <p>A task registers as copying ({@link KafkaMirrorWriter#copyStarted}) before its first send
 * checks the gate, and the driver closes the gate before it waits for the copies to end: a task
 * the wait does not see finds the gate closed.
 */
public final class StopGate {
    private static final AtomicLong CLOSED = new AtomicLong();

    private StopGate() {
    }

    /** The generation of a writer created now (on the driver). */
    static long generation() {
        return CLOSED.get();
    }

    /** Writers created until now refuse to send; called before their query is stopped. */
    public static void close() {
        CLOSED.incrementAndGet();
    }

    static boolean admits(long generation) {
        return generation >= CLOSED.get();
    }

    /** Ends the task, as Spark's own kill would, when its writer's query was stopped. */
    static void check(long generation) {
        if (!admits(generation)) {
            throw new TaskKilledException("the replication query was stopped");
        }
    }
}
