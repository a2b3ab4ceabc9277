package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** MirrorMaker 2's offset-sync rule as the writers apply it to acknowledged records. */
class PartitionProgressTest {

    private static final long LAG_MAX = 100;

    /** The syncs made, as "upstream->downstream". */
    private static List<String> syncs(PartitionProgress progress) {
        List<String> syncs = new ArrayList<>();
        for (long[] sync : progress.syncs()) {
            syncs.add(sync[0] + "->" + sync[1]);
        }
        return syncs;
    }

    /** Acknowledges upstream offsets {@code from..until-1} written at downstream {@code downstream..}. */
    private static void acknowledge(PartitionProgress progress, long from, long until, long downstream) {
        for (long upstream = from; upstream < until; upstream++) {
            progress.acknowledged(upstream, downstream + (upstream - from));
        }
    }

    @Test
    void theFirstRecordOfANewPartitionIsSynced() {
        PartitionProgress progress = new PartitionProgress(40, LAG_MAX, null);
        acknowledge(progress, 40, 50, 0);
        assertEquals(List.of("40->0"), syncs(progress));
        assertEquals(49, progress.lastUpstream());
        assertEquals(9, progress.lastDownstream());
    }

    @Test
    void aSkippedUpstreamRecordIsSynced() {
        PartitionProgress progress = new PartitionProgress(0, LAG_MAX, null);
        acknowledge(progress, 0, 5, 0);
        // offsets 5..9 are gone upstream (compacted, or filtered out): the gap changes
        acknowledge(progress, 10, 12, 5);
        assertEquals(List.of("0->0", "10->5"), syncs(progress));
    }

    @Test
    void aDownstreamOffsetBehindThePreviousOneIsSynced() {
        PartitionProgress progress = new PartitionProgress(0, LAG_MAX, null);
        acknowledge(progress, 0, 5, 20);
        // the remote topic was truncated (deleted and created again): downstream starts over
        acknowledge(progress, 5, 7, 0);
        assertEquals(List.of("0->20", "5->0"), syncs(progress));
    }

    @Test
    void aDownstreamJumpAloneIsNotSynced() {
        PartitionProgress progress = new PartitionProgress(0, LAG_MAX, null);
        acknowledge(progress, 0, 3, 0);
        acknowledge(progress, 3, 6, 10); // e.g. transaction markers downstream: upstream stays consecutive
        assertEquals(List.of("0->0"), syncs(progress));
    }

    @Test
    void aSyncIsMadeOnceTheTranslationWouldLagByOffsetLagMax() {
        PartitionProgress progress = new PartitionProgress(0, 3, null);
        acknowledge(progress, 0, 10, 0);
        // a translated offset lands one past its sync: downstream 4 would be 3 behind the sync at 0
        assertEquals(List.of("0->0", "4->4", "8->8"), syncs(progress));
    }

    @Test
    void offsetLagMaxZeroSyncsEveryRecord() {
        PartitionProgress progress = new PartitionProgress(0, 0, null);
        acknowledge(progress, 0, 4, 100);
        assertEquals(List.of("0->100", "1->101", "2->102", "3->103"), syncs(progress));
    }

    @Test
    void theStateCarriesTheRuleToTheNextBatch() {
        PartitionProgress first = new PartitionProgress(0, 3, null);
        acknowledge(first, 0, 3, 0);
        assertEquals("2\t2\t0", first.state());

        PartitionProgress next = new PartitionProgress(3, 3, first.state());
        acknowledge(next, 3, 6, 3);
        // no sync for the partition being new again; the lag counts from the previous batch's sync
        assertEquals(List.of("4->4"), syncs(next));
        assertEquals("5\t5\t4", next.state());
    }

    @Test
    void aSkipAcrossBatchesIsSynced() {
        PartitionProgress next = new PartitionProgress(8, LAG_MAX, "4\t4\t0");
        next.acknowledged(8, 5);
        assertEquals(List.of("8->5"), syncs(next));
    }

    @Test
    void theStateOfAPartitionWithNothingAcknowledgedStartsItAfresh() {
        PartitionProgress idle = new PartitionProgress(0, LAG_MAX, null);
        assertEquals("-1\t-1\t-1", idle.state());
        PartitionProgress next = new PartitionProgress(0, LAG_MAX, idle.state());
        next.acknowledged(0, 0);
        assertEquals(List.of("0->0"), syncs(next));
    }

    @Test
    void promotionSyncsTheLatestPositionOnceWhenItWasNotSynced() {
        PartitionProgress progress = new PartitionProgress(0, LAG_MAX, null);
        assertFalse(progress.promote(), "nothing acknowledged: nothing to promote");
        acknowledge(progress, 0, 5, 0);
        assertTrue(progress.promote());
        assertEquals(List.of("0->0", "4->4"), syncs(progress));
        assertEquals("4\t4\t4", progress.state());
        assertFalse(progress.promote(), "the latest position is synced now");
        assertEquals(2, progress.syncs().size());
    }

    @Test
    void promotionHasNothingToAddWhenTheLatestRecordWasSynced() {
        PartitionProgress progress = new PartitionProgress(0, LAG_MAX, null);
        acknowledge(progress, 0, 3, 0);
        progress.acknowledged(7, 3); // skipped upstream records: synced by the rule itself
        assertFalse(progress.promote());
        assertEquals(List.of("0->0", "7->3"), syncs(progress));
    }

    @Test
    void anEmitterReceivesEachSyncAsItIsMadeInOrder() {
        List<long[]> emitted = new ArrayList<>();
        PartitionProgress progress = new PartitionProgress(0, 2, null, (up, down) -> emitted.add(new long[] {up, down}));
        acknowledge(progress, 0, 5, 10);
        progress.promote();
        assertEquals(3, emitted.size());
        assertArrayEquals(new long[] {0, 10}, emitted.get(0));
        assertArrayEquals(new long[] {3, 13}, emitted.get(1));
        assertArrayEquals(new long[] {4, 14}, emitted.get(2));
        assertTrue(progress.syncs().isEmpty(), "emitted syncs are not also collected");
    }

    @Test
    void noAcknowledgementMovesThePositionPastAFailedSend() {
        PartitionProgress p = new PartitionProgress(0, 100, null);
        p.acknowledged(0, 10);
        p.failed();
        p.acknowledged(2, 12);
        assertEquals(0, p.lastUpstream());
        assertEquals(10, p.lastDownstream());
    }
}
