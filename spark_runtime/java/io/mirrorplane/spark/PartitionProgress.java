package io.mirrorplane.spark;

import java.util.ArrayList;
import java.util.List;

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
    private final List<long[]> syncs = new ArrayList<>();

    /** {@code state} is the previous batch's {@link #state()} for this partition, or null. */
    PartitionProgress(long firstUpstream, long maxOffsetLag, String state) {
        this.firstUpstream = firstUpstream;
        this.maxOffsetLag = maxOffsetLag;
        if (state != null) {
            String[] parts = state.split("\t");
            previousUpstream = Long.parseLong(parts[0]);
            previousDownstream = Long.parseLong(parts[1]);
            lastSyncDownstream = Long.parseLong(parts[2]);
        }
    }

    synchronized void acknowledged(long upstream, long downstream) {
        boolean noPreviousSync = previousUpstream == -1;
        // a translated offset lands one past its sync, hence the + 1
        boolean translationTooStale = downstream - (lastSyncDownstream + 1) >= maxOffsetLag;
        boolean skippedUpstreamRecord = upstream - previousUpstream != 1;
        boolean truncatedDownstream = downstream < previousDownstream;
        if (noPreviousSync || translationTooStale || skippedUpstreamRecord || truncatedDownstream) {
            lastSyncDownstream = downstream;
            syncs.add(new long[] {upstream, downstream});
        }
        previousUpstream = upstream;
        previousDownstream = downstream;
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
