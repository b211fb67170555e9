package org.apache.kafka.controller;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import org.apache.kafka.common.utils.Time;

/** The controller's clock: it moves only when the harness advances it (on the controller's own thread, inside an
 *  event, so the event queue never sees time move between two of its looks at it). */
final class HarnessClock implements Time {
    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);

    public long milliseconds() {
        return nanos.get() / 1_000_000L;
    }

    public long nanoseconds() {
        return nanos.get();
    }

    public void sleep(long ms) {
        advance(ms);
    }

    void advance(long ms) {
        nanos.addAndGet(ms * 1_000_000L);
    }

    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        if (!condition.get()) {
            throw new IllegalStateException("the harness clock cannot wait");
        }
    }
}
