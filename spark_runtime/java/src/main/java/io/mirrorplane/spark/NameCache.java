package io.mirrorplane.spark;

import java.util.HashMap;
import java.util.function.Function;

/**
 * Names converted once, not per record: header names repeat from record to record, and turning
 * one from Spark's {@code UTF8String} back into Kafka's {@code String} for every header of every
 * record was about 5% of a real-time mirror's CPU samples at 56,000 records/s. Bounded: a source
 * whose records each bring a header name of their own clears it now and then rather than growing
 * it.
 */
final class NameCache<K, V> {

    static final int KEPT = 1024;
    private final HashMap<K, V> names = new HashMap<>();
    private final Function<K, K> keep;
    private final Function<K, V> convert;

    /**
     * {@code keep}: the key as the cache may hold it (a copy when the caller's key is a view of a
     * buffer reused for the next record); {@code convert}: the conversion to remember.
     */
    NameCache(Function<K, K> keep, Function<K, V> convert) {
        this.keep = keep;
        this.convert = convert;
    }

    V get(K name) {
        V converted = names.get(name);
        if (converted == null) {
            if (names.size() >= KEPT) {
                names.clear();
            }
            converted = convert.apply(name);
            names.put(keep.apply(name), converted);
        }
        return converted;
    }

    int size() {
        return names.size();
    }
}
