package io.mirrorplane.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * What one task wrote for one source partition, and MirrorMaker 2's offset-sync rule
 * (MirrorSourceTask's PartitionState) applied to every acknowledged record, where the real
 * downstream offset is known. Acknowledgements of one partition arrive in send order.
 */
final class PartitionProgress {
    final long firstUpstream;
    private final long maxOffsetLag;
    long lastUpstream = -1;
    long records;
    long bytes;
    private long previousUpstream = -1;
    private long previousDownstream = -1;
    private long lastSyncDownstream = -1;
    private boolean broken;
    private final List<long[]> syncs = new ArrayList<>();
    /** Null: syncs are collected for {@link #syncs()}; else each is handed over as it is made. */
    private final BiConsumer<Long, Long> emitter;

    /** {@code state} is the previous batch's {@link #state()} for this partition, or null. */
    PartitionProgress(long firstUpstream, long maxOffsetLag, String state) {
        this(firstUpstream, maxOffsetLag, state, null);
    }

    PartitionProgress(long firstUpstream, long maxOffsetLag, String state, BiConsumer<Long, Long> emitter) {
        this.firstUpstream = firstUpstream;
        this.maxOffsetLag = maxOffsetLag;
        this.emitter = emitter;
        if (state != null) {
            String[] parts = state.split("\t");
            previousUpstream = Long.parseLong(parts[0]);
            previousDownstream = Long.parseLong(parts[1]);
            lastSyncDownstream = Long.parseLong(parts[2]);
        }
    }

    /**
     * A send of this partition failed: no later acknowledgement moves its position on, so that a
     * committed position never passes a record that is not on the target (the task fails, and the
     * records after its last good position are sent again).
     */
    synchronized void failed() {
        broken = true;
    }

    synchronized void acknowledged(long upstream, long downstream) {
        if (broken) {
            return;
        }
        boolean noPreviousSync = previousUpstream == -1;
        // a translated offset lands one past its sync, hence the + 1
        boolean translationTooStale = downstream - (lastSyncDownstream + 1) >= maxOffsetLag;
        boolean skippedUpstreamRecord = upstream - previousUpstream != 1;
        boolean truncatedDownstream = downstream < previousDownstream;
        if (noPreviousSync || translationTooStale || skippedUpstreamRecord || truncatedDownstream) {
            sync(upstream, downstream);
        }
        previousUpstream = upstream;
        previousDownstream = downstream;
    }

    /**
     * MM2's commit-time promotion: the latest acknowledged position is synced when it was not yet,
     * so that a consumer that has caught up translates exactly; whether it was.
     */
    synchronized boolean promote() {
        if (previousUpstream < 0 || previousDownstream == lastSyncDownstream) {
            return false;
        }
        sync(previousUpstream, previousDownstream);
        return true;
    }

    private void sync(long upstream, long downstream) {
        lastSyncDownstream = downstream;
        if (emitter != null) {
            emitter.accept(upstream, downstream); // under this object's lock: syncs leave in order
        } else {
            syncs.add(new long[] {upstream, downstream});
        }
    }

    synchronized long lastUpstream() {
        return previousUpstream;
    }

    synchronized long lastDownstream() {
        return previousDownstream;
    }

    synchronized List<long[]> syncs() {
        return new ArrayList<>(syncs);
    }

    synchronized String state() {
        return previousUpstream + "\t" + previousDownstream + "\t" + lastSyncDownstream;
    }
}
