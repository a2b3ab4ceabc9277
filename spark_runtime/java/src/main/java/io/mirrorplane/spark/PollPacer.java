package io.mirrorplane.spark;

import java.io.Serializable;

/**
 * When a slot's consumer polls next, in real-time mode. A consumer near the log's end that polls as
 * soon as it has handed over the last poll's records has its broker answer a fetch for every few
 * records that arrive; at tens of thousands of records a second on busy cores, answering them costs
 * the broker the CPU it needs to keep up. While the slot's records arrive faster than {@code
 * aboveRecordsPerSecond}, a poll opens an interval only once the last one is over: that poll hands
 * over what the consumer fetched ahead after the previous poll (its client sends the next fetch
 * before returning records), and the one right after it waits for the fetch the first sent, so that
 * a record waits at most about one interval and a round trip longer. A poll that came back full, with
 * more waiting, is followed at once, and a slow slot is never paced. The rate is measured over
 * {@link #WINDOW_NANOS}.
 *
 * <p>Not thread-safe: one per reader. Times are {@link System#nanoTime()}.
 */
final class PollPacer {

    /** A slot's pacing settings, carried to its reader on an executor. */
    record Pacing(long intervalMs, long aboveRecordsPerSecond) implements Serializable {}

    static final long WINDOW_NANOS = 200_000_000L;

    private final long intervalNanos;
    private final long aboveRecordsPerSecond;
    private final int fullPoll;
    private long windowStart = Long.MIN_VALUE;
    private long windowRecords;
    private long intervalStart; // when the latest interval's first poll began
    private boolean followUp; // the next poll is the one right after an interval's first
    private boolean fast;
    private boolean lastFull;

    /** {@code fullPoll}: the records one poll returns at most (the consumer's max.poll.records). */
    PollPacer(Pacing pacing, int fullPoll) {
        this.intervalNanos = Math.max(0, pacing.intervalMs()) * 1_000_000L;
        this.aboveRecordsPerSecond = pacing.aboveRecordsPerSecond();
        this.fullPoll = Math.max(1, fullPoll);
    }

    /** Nanoseconds to wait at {@code now} before the next poll: 0 unless the slot is fast, the last
     *  poll did not come back full, the next is not an interval's second and the interval is not over. */
    long waitNanos(long now) {
        if (!fast || lastFull || followUp || intervalNanos == 0) {
            return 0;
        }
        return Math.max(0, intervalStart + intervalNanos - now);
    }

    /** A poll that began at {@code started} returned {@code records}. */
    void polled(long started, int records) {
        lastFull = records >= fullPoll;
        if (followUp && !lastFull) {
            followUp = false;
        } else { // a full poll's successor reads on at once and opens the next interval
            intervalStart = started;
            followUp = fast && intervalNanos > 0 && !lastFull;
        }
        if (windowStart == Long.MIN_VALUE) {
            windowStart = started;
        }
        windowRecords += records;
        long elapsed = started - windowStart;
        if (elapsed >= WINDOW_NANOS) {
            fast = windowRecords * 1_000_000_000.0 / elapsed > aboveRecordsPerSecond;
            windowStart = started;
            windowRecords = 0;
        }
    }

    /** Whether the slot's records arrived faster than the pacing limit in the last full window. */
    boolean fast() {
        return fast;
    }
}
