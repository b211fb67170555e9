package org.apache.kafka.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.raft.Batch;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.RaftClient;
import org.apache.kafka.raft.errors.NotLeaderException;
import org.apache.kafka.raft.internals.MemoryBatchReader;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.server.common.OffsetAndEpoch;
import org.apache.kafka.snapshot.SnapshotWriter;

/**
 * A single-voter metadata log the harness controls, in place of KafkaRaftClient: its node leads epoch
 * {@code becomeLeader(epoch)} from then on; an append ({@code prepareAppend} + {@code schedulePreparedAppend}, as
 * QuorumController writes a ControllerResult) becomes one batch in the log at once, uncommitted; the high watermark
 * moves past a batch only when the harness calls {@link #commitNext()}, which hands the batch to the listener
 * ({@code handleCommit}) as KafkaRaftClient does once a majority has fetched it. Offsets count records, as Kafka's
 * do (a batch of n records takes n offsets). No snapshots.
 */
final class HarnessRaft implements RaftClient<ApiMessageAndVersion> {
    record Stored(long base, int epoch, List<ApiMessageAndVersion> records) {
        long last() {
            return base + records.size() - 1;
        }
    }

    final int nodeId;
    final HarnessClock clock;
    final List<Stored> batches = new ArrayList<>();
    final List<Stored> prepared = new ArrayList<>();
    int committed = 0;            // batches below the high watermark
    int activationBatches = 0;    // the controller's activation batches (bootstrap records): not model entries
    int epoch = 0;
    int resigned = 0;
    long nextOffset = 0;
    Listener<ApiMessageAndVersion> listener;

    HarnessRaft(int nodeId, HarnessClock clock) {
        this.nodeId = nodeId;
        this.clock = clock;
    }

    synchronized int uncommitted() {
        return batches.size() - committed;
    }

    void becomeLeader(int newEpoch) {
        synchronized (this) {
            epoch = newEpoch;
        }
        listener.handleLeaderChange(new LeaderAndEpoch(OptionalInt.of(nodeId), newEpoch));
    }

    void commitNext() {
        Stored b;
        synchronized (this) {
            b = batches.get(committed);
            committed++;
        }
        Batch<ApiMessageAndVersion> batch = Batch.data(b.base(), b.epoch(), clock.milliseconds(), 0, b.records());
        listener.handleCommit(MemoryBatchReader.of(List.of(batch), reader -> { }));
    }

    @Override
    public synchronized void register(Listener<ApiMessageAndVersion> l) {
        listener = l;
    }

    @Override
    public synchronized void unregister(Listener<ApiMessageAndVersion> l) {
        if (listener == l) {
            listener = null;
        }
    }

    @Override
    public synchronized OptionalLong highWatermark() {
        return committed == 0 ? OptionalLong.empty() : OptionalLong.of(batches.get(committed - 1).last() + 1);
    }

    @Override
    public synchronized LeaderAndEpoch leaderAndEpoch() {
        return epoch == 0 ? LeaderAndEpoch.UNKNOWN : new LeaderAndEpoch(OptionalInt.of(nodeId), epoch);
    }

    @Override
    public OptionalInt nodeId() {
        return OptionalInt.of(nodeId);
    }

    // RaftClient.voterNode from 4.2 on (no @Override: the same source builds against 4.1)
    public Optional<Node> voterNode(int id, ListenerName listenerName) {
        return Optional.empty();
    }

    @Override
    public synchronized long prepareAppend(int appendEpoch, List<ApiMessageAndVersion> records) {
        if (appendEpoch != epoch) {
            throw new NotLeaderException("append in epoch " + appendEpoch + ", the leader's is " + epoch);
        }
        Stored b = new Stored(nextOffset, appendEpoch, List.copyOf(records));
        nextOffset += records.size();
        prepared.add(b);
        return b.last();
    }

    @Override
    public synchronized void schedulePreparedAppend() {
        batches.addAll(prepared);
        prepared.clear();
    }

    @Override
    public CompletableFuture<Void> shutdown(int timeoutMs) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public synchronized void resign(int resignEpoch) {
        resigned++;  // QuorumController.renounce after a failed event: the harness reports it as a fault
    }

    @Override
    public Optional<SnapshotWriter<ApiMessageAndVersion>> createSnapshot(OffsetAndEpoch snapshotId, long lastContainedLogTime) {
        return Optional.empty();
    }

    @Override
    public Optional<OffsetAndEpoch> latestSnapshotId() {
        return Optional.empty();
    }

    @Override
    public synchronized long logEndOffset() {
        return nextOffset;
    }

    @Override
    public KRaftVersion kraftVersion() {
        return KRaftVersion.KRAFT_VERSION_1;
    }

    @Override
    public void upgradeKRaftVersion(int epoch, KRaftVersion version, boolean validateOnly) {
        throw new UnsupportedOperationException("kraft.version upgrades are not modelled");
    }

    @Override
    public void close() {
    }
}
