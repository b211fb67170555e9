package org.apache.kafka.raft;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Records;
import org.apache.kafka.snapshot.RawSnapshotReader;
import org.apache.kafka.snapshot.RawSnapshotWriter;

import ${harness.offsetAndEpoch};

/**
 * kraftcheck's in-memory replicated log: whole batches, as the client appended them, in offset order.
 * Durable (a restart keeps every batch and loses only the high watermark), no snapshots (log start offset 0),
 * as the quorum model assumes (FIDELITY Q21, Q27). Rules taken from Kafka's KafkaMetadataLog/MockLog: an append must
 * start at the log end offset; truncation below the high watermark and a non-monotonic high watermark throw.
 * Methods of both the 3.9 and 4.x ReplicatedLog are present (appendAsFollower with and without an epoch), so no
 * {@code @Override}.
 */
public final class HarnessLog implements ReplicatedLog {
    /** One stored batch. */
    record Batch(long base, long last, int epoch, boolean control, ByteBuffer bytes, int[] values) { }

    /** Each record's value as the model numbers them: 0 for a control record (LeaderChange), else the client value
     *  (the harness appends the decimal strings "1", "2", ...; -1 for anything else). */
    static int[] values(RecordBatch batch) {
        List<Integer> out = new ArrayList<>();
        for (org.apache.kafka.common.record.Record r : batch) {
            if (batch.isControlBatch() || !r.hasValue()) {
                out.add(0);
                continue;
            }
            byte[] b = new byte[r.valueSize()];
            r.value().duplicate().get(b);
            try {
                out.add(Integer.parseInt(new String(b, java.nio.charset.StandardCharsets.UTF_8)));
            } catch (NumberFormatException ex) {
                out.add(-1);
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private final List<Batch> batches = new ArrayList<>();
    private final TopicPartition topicPartition = new TopicPartition("__cluster_metadata", 0);
    private final Uuid topicId = new Uuid(0L, 1L);
    private LogOffsetMetadata highWatermark = new LogOffsetMetadata(0L);
    /** At most this many batches per read: a Fetch answer carries a bounded prefix (KafkaMetadataLog reads up to
     *  its max fetch size; the model's bound fetch_max). */
    int readBatches = Integer.MAX_VALUE;
    /** Receives "append"/"truncate"/"hw" events (set by the harness for the node's current incarnation). */
    Consumer<String[]> listener = e -> { };

    List<Batch> batches() {
        return batches;
    }

    /** A restart loses the in-memory high watermark, nothing else (durable log). */
    void reopen() {
        highWatermark = new LogOffsetMetadata(0L);
    }

    public LogAppendInfo appendAsLeader(Records records, int epoch) {
        return append(records, epoch, "leader");
    }

    public LogAppendInfo appendAsFollower(Records records) {
        return append(records, -1, "follower");
    }

    public LogAppendInfo appendAsFollower(Records records, int epoch) {
        return append(records, -1, "follower");
    }

    private LogAppendInfo append(Records records, int leaderEpoch, String as) {
        if (records.sizeInBytes() == 0) {
            throw new IllegalArgumentException("Attempt to append an empty record set");
        }
        long first = endOffset().offset();
        long last = first;
        for (RecordBatch batch : records.batches()) {
            long end = endOffset().offset();
            if (batch.baseOffset() != end) {
                throw new IllegalStateException("Illegal append at offset " + batch.baseOffset() + " with log end offset " + end);
            }
            int epoch = leaderEpoch >= 0 ? leaderEpoch : batch.partitionLeaderEpoch();
            ByteBuffer copy = ByteBuffer.allocate(batch.sizeInBytes());
            batch.writeTo(copy);
            copy.flip();
            if (leaderEpoch >= 0) {
                // KafkaMetadataLog.appendAsLeader stamps the leader epoch on the batch.
                MemoryRecords.readableRecords(copy.duplicate()).batches().forEach(b -> b.setPartitionLeaderEpoch(epoch));
            }
            batches.add(new Batch(batch.baseOffset(), batch.lastOffset(), epoch, batch.isControlBatch(), copy, values(batch)));
            last = batch.lastOffset();
            listener.accept(new String[] {"append", as, Long.toString(batch.baseOffset()), Long.toString(last),
                Integer.toString(epoch), Boolean.toString(batch.isControlBatch())});
        }
        return new LogAppendInfo(first, last);
    }

    public LogFetchInfo read(long startOffset, Isolation isolation) {
        long limit = isolation == Isolation.COMMITTED ? highWatermark.offset() : endOffset().offset();
        if (startOffset < 0 || startOffset > endOffset().offset()) {
            throw new org.apache.kafka.common.errors.OffsetOutOfRangeException("offset " + startOffset + " out of range");
        }
        List<ByteBuffer> parts = new ArrayList<>();
        int size = 0;
        for (Batch b : batches) {
            if (b.last() >= startOffset && b.base() < limit && parts.size() < readBatches) {
                parts.add(b.bytes().duplicate());
                size += b.bytes().remaining();
            }
        }
        ByteBuffer all = ByteBuffer.allocate(size);
        for (ByteBuffer p : parts) {
            all.put(p);
        }
        all.flip();
        return new LogFetchInfo(MemoryRecords.readableRecords(all), new LogOffsetMetadata(startOffset));
    }

    public LogFetchInfo read(long startOffset, Isolation isolation, int maxBytes) {
        return read(startOffset, isolation);
    }

    public int lastFetchedEpoch() {
        return batches.isEmpty() ? 0 : batches.get(batches.size() - 1).epoch();
    }

    public OffsetAndEpoch endOffsetForEpoch(int epoch) {
        // MockLog.lastOffsetAndEpochFiltered: the end of the largest epoch <= epoch.
        int lowerEpoch = 0;
        for (Batch b : batches) {
            if (b.epoch() > epoch) {
                return new OffsetAndEpoch(b.base(), lowerEpoch);
            }
            lowerEpoch = b.epoch();
        }
        return new OffsetAndEpoch(endOffset().offset(), lastFetchedEpoch());
    }

    public LogOffsetMetadata endOffset() {
        return new LogOffsetMetadata(batches.isEmpty() ? 0L : batches.get(batches.size() - 1).last() + 1);
    }

    public LogOffsetMetadata highWatermark() {
        return highWatermark;
    }

    public long startOffset() {
        return 0L;
    }

    public void initializeLeaderEpoch(int epoch) {
    }

    public void truncateTo(long offset) {
        if (offset < highWatermark.offset()) {
            throw new IllegalArgumentException("Attempt to truncate to offset " + offset
                + ", which is below the current high watermark " + highWatermark.offset());
        }
        long before = endOffset().offset();
        batches.removeIf(b -> b.last() >= offset);
        if (endOffset().offset() != before) {
            listener.accept(new String[] {"truncate", Long.toString(offset), Long.toString(endOffset().offset())});
        }
    }

    public boolean truncateToLatestSnapshot() {
        return false;
    }

    public void updateHighWatermark(LogOffsetMetadata offsetMetadata) {
        if (highWatermark.offset() > offsetMetadata.offset()) {
            throw new IllegalArgumentException("Non-monotonic update of high watermark from " + highWatermark.offset()
                + " to " + offsetMetadata.offset());
        }
        if (offsetMetadata.offset() > endOffset().offset()) {
            throw new IllegalArgumentException("High watermark " + offsetMetadata.offset() + " above the log end offset "
                + endOffset().offset());
        }
        if (offsetMetadata.offset() != highWatermark.offset()) {
            listener.accept(new String[] {"hw", Long.toString(offsetMetadata.offset())});
        }
        highWatermark = new LogOffsetMetadata(offsetMetadata.offset());
    }

    public boolean deleteBeforeSnapshot(OffsetAndEpoch snapshotId) {
        return false;
    }

    public void flush(boolean forceFlushActiveSegment) {
    }

    public boolean maybeClean() {
        return false;
    }

    public TopicPartition topicPartition() {
        return topicPartition;
    }

    public Uuid topicId() {
        return topicId;
    }

    public Optional<RawSnapshotWriter> createNewSnapshot(OffsetAndEpoch snapshotId) {
        throw new UnsupportedOperationException("kraftcheck's harness log has no snapshots");
    }

    public Optional<RawSnapshotWriter> createNewSnapshotUnchecked(OffsetAndEpoch snapshotId) {
        throw new UnsupportedOperationException("kraftcheck's harness log has no snapshots");
    }

    public Optional<RawSnapshotReader> readSnapshot(OffsetAndEpoch snapshotId) {
        return Optional.empty();
    }

    public Optional<RawSnapshotReader> latestSnapshot() {
        return Optional.empty();
    }

    public Optional<OffsetAndEpoch> latestSnapshotId() {
        return Optional.empty();
    }

    public Optional<OffsetAndEpoch> earliestSnapshotId() {
        return Optional.empty();
    }

    public void onSnapshotFrozen(OffsetAndEpoch snapshotId) {
    }
}
