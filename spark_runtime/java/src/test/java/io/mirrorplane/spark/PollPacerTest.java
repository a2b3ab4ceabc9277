package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PollPacerTest {

    private static final long MS = 1_000_000L;

    /** A reader that polls whenever the pacer lets it, each poll returning {@code records} and its records
     *  taking {@code handOverMs} to hand over, from {@code from} for {@code ms}; the polls' start times. */
    private static List<Long> run(PollPacer pacer, long from, long ms, int records, long handOverMs) {
        List<Long> starts = new ArrayList<>();
        long now = from;
        while (now < from + ms * MS) {
            now += pacer.waitNanos(now);
            pacer.polled(now, records);
            starts.add(now);
            now += handOverMs * MS;
        }
        return starts;
    }

    private static long between(List<Long> starts, long fromMs, long toMs) {
        return starts.stream().filter(t -> t >= fromMs * MS && t < toMs * MS).count();
    }

    @Test
    void aSlowSlotPollsAtOnce() {
        PollPacer pacer = new PollPacer(new PollPacer.Pacing(5, 10_000), 500);
        List<Long> starts = run(pacer, 0, 1000, 2, 1); // 2,000 records/s
        assertFalse(pacer.fast());
        assertEquals(1000, starts.size());
    }

    @Test
    void aFastSlotPollsTwicePerInterval() {
        PollPacer pacer = new PollPacer(new PollPacer.Pacing(5, 10_000), 500);
        List<Long> starts = run(pacer, 0, 1000, 60, 1); // unpaced: 60,000 records/s
        assertTrue(pacer.fast());
        assertEquals(200, between(starts, 300, 800)); // an interval's first poll and the one after it
        int first = starts.indexOf(starts.stream().filter(t -> t >= 300 * MS).findFirst().orElseThrow());
        long gapA = starts.get(first + 1) - starts.get(first);
        long gapB = starts.get(first + 2) - starts.get(first + 1);
        assertEquals(List.of(MS, 4 * MS), gapA < gapB ? List.of(gapA, gapB) : List.of(gapB, gapA));
    }

    @Test
    void aFullPollIsFollowedAtOnce() {
        PollPacer pacer = new PollPacer(new PollPacer.Pacing(5, 10_000), 500);
        List<Long> steady = run(pacer, 0, 500, 60, 1);
        assertTrue(pacer.fast());
        long now = steady.get(steady.size() - 1) + MS;
        now += pacer.waitNanos(now);
        pacer.polled(now, 500); // a backlog: this poll and every one after it full, none held back
        now += MS;
        for (int i = 0; i < 10; i++) {
            assertEquals(0, pacer.waitNanos(now));
            pacer.polled(now, 500);
            now += MS;
        }
        pacer.polled(now, 120); // caught up: this poll opens an interval, the next follows it at once
        assertEquals(0, pacer.waitNanos(now + MS));
        pacer.polled(now + MS, 40);
        assertEquals(3 * MS, pacer.waitNanos(now + 2 * MS));
    }

    @Test
    void aSlotThatSlowsDownIsNoLongerPaced() {
        PollPacer pacer = new PollPacer(new PollPacer.Pacing(5, 10_000), 500);
        List<Long> fast = run(pacer, 0, 500, 60, 1);
        assertTrue(pacer.fast());
        List<Long> slow = run(pacer, fast.get(fast.size() - 1) + MS, 500, 1, 1); // about 1,000 records/s
        assertFalse(pacer.fast());
        long last = slow.get(slow.size() - 1);
        assertEquals(0, pacer.waitNanos(last + MS));
    }

    @Test
    void pacingOffNeverWaits() {
        PollPacer pacer = new PollPacer(new PollPacer.Pacing(0, 0), 500);
        List<Long> polls = run(pacer, 0, 1000, 60, 1);
        assertEquals(1000, polls.size());
        assertTrue(pacer.fast());
        assertEquals(0, pacer.waitNanos(polls.get(polls.size() - 1)));
    }

    @Test
    void theFullPollIsTheConsumersMaxPollRecords() {
        assertEquals(500, SlotReader.maxPollRecords(Map.of()));
        assertEquals(2000, SlotReader.maxPollRecords(Map.of("max.poll.records", " 2000")));
    }
}
