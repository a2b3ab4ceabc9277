package io.mirrorplane.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class NameCacheTest {

    @Test
    void aNameIsConvertedOnceAndKeptAsTheKeepFunctionGivesIt() {
        List<String> converted = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        NameCache<String, Integer> cache = new NameCache<>(name -> {
            kept.add(name);
            return name;
        }, name -> {
            converted.add(name);
            return name.length();
        });
        assertEquals(5, cache.get("trace"));
        assertEquals(5, cache.get("trace"));
        assertEquals(6, cache.get("tenant"));
        assertEquals(List.of("trace", "tenant"), converted);
        assertEquals(List.of("trace", "tenant"), kept);
    }

    @Test
    void namesOfTheirOwnPerRecordClearTheCacheRatherThanGrowIt() {
        NameCache<String, String> cache = new NameCache<>(name -> name, String::toUpperCase);
        for (int i = 0; i < NameCache.KEPT * 3; i++) {
            assertEquals("ID-" + i, cache.get("id-" + i));
        }
        assertEquals(NameCache.KEPT, cache.size());
    }
}
