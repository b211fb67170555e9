package org.apache.kafka.controller;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * kraftcheck's deterministic harness around the released {@link QuorumController} (issue 31 item 5).
 *
 * <p>One active controller (node {@link #CONTROLLER_ID}, the single voter of its quorum) on a raft layer the driver
 * controls ({@link HarnessRaft}: the leader of epoch 1 from the start; a batch the controller appends stays
 * uncommitted until the driver commits it, one batch a command, as the model's {@code commit} step does), with a
 * clock that moves only when the driver says so ({@link HarnessClock}). Brokers are played by the driver: it sends
 * their requests through the controller's public API ({@code registerBroker}, {@code processBrokerHeartbeat},
 * {@code alterPartition}) and sees their replies when the futures complete. After every command the controller's
 * event queue is driven to quiescence (read events appended until nothing changes), so a command's effects are all
 * in the state that follows it.
 *
 * <p>The cluster starts from bootstrap metadata holding the finalized metadata.version and one topic whose partitions
 * are replicated on every broker, leaderless, with every broker in the ISR (the controller model's bootstrap image,
 * model/controller/image.py); the controller writes it as its activation batch, which the harness commits at once.
 *
 * <p>Protocol: one JSON command a line on stdin, answered by JSON event lines on stdout ending with a
 * {@code {"ev":"state",...}} line and a {@code {"ev":"done"}} line. See impl/kafka/controller_harness.py.
 * This class is in package org.apache.kafka.controller to read the controller's state on its own thread
 * ({@code appendReadEvent}, {@code clusterControl()}, {@code replicationControl()}), as Kafka's own
 * QuorumControllerTest does.
 */
public final class ControllerHarness {
    static final ObjectMapper JSON = new ObjectMapper();
    static final int CONTROLLER_ID = 3000;
    static final String CLUSTER_ID = "kraftcheck-cluster-0";
    static final String TOPIC = "t";
    static final Uuid TOPIC_ID = new Uuid(0x6b72616674L, 0x636865636bL);

    /** The configurations the controller reads: min.insync.replicas and unclean.leader.election.enable, with
     *  Kafka's defaults (1, false: TopicConfig, ServerLogConfigs). */
    static ConfigDef configDef() {
        return new ConfigDef()
            .define("min.insync.replicas", ConfigDef.Type.INT, 1, ConfigDef.Importance.HIGH, "min.insync.replicas")
            .define("unclean.leader.election.enable", ConfigDef.Type.BOOLEAN, false, ConfigDef.Importance.HIGH,
                "unclean.leader.election.enable");
    }

    static final KafkaConfigSchema CONFIG_SCHEMA = new KafkaConfigSchema(
        Map.of(ConfigResource.Type.BROKER, configDef(), ConfigResource.Type.TOPIC, configDef()), Map.of());

    final PrintStream out;
    HarnessClock clock;
    HarnessRaft raft;
    QuorumController controller;
    int brokers;
    int partitions;
    long sessionMs;
    long nextRequest = 1;
    /** Requests sent and not answered yet: request id -> (kind, broker, future). */
    final Map<Long, Pending> pending = new TreeMap<>();
    final List<String> faults = new ArrayList<>();

    record Pending(String kind, int broker, CompletableFuture<?> future) { }

    ControllerHarness(PrintStream out) {
        this.out = out;
    }

    void emit(ObjectNode ev) {
        out.println(ev.toString());
    }

    ObjectNode event(String kind) {
        ObjectNode ev = JSON.createObjectNode();
        ev.put("ev", kind);
        return ev;
    }

    // ---- commands ---------------------------------------------------------------------------------------------

    void start(JsonNode cmd) throws Exception {
        close();
        brokers = cmd.path("brokers").asInt(2);
        partitions = cmd.path("partitions").asInt(1);
        sessionMs = cmd.path("session_ms").asLong(9000);
        clock = new HarnessClock();
        raft = new HarnessRaft(CONTROLLER_ID, clock);
        faults.clear();
        pending.clear();
        nextRequest = 1;
        List<ApiMessageAndVersion> boot = new ArrayList<>(
            BootstrapMetadata.fromVersion(MetadataVersion.LATEST_PRODUCTION, "kraftcheck").records());
        boot.add(new ApiMessageAndVersion(new TopicRecord().setName(TOPIC).setTopicId(TOPIC_ID), (short) 0));
        List<Integer> all = new ArrayList<>();  // the bootstrap replicas: "replicas", or every broker
        if (cmd.has("replicas")) {
            cmd.get("replicas").forEach(r -> all.add(r.asInt()));
        } else {
            for (int b = 0; b < brokers; b++) {
                all.add(b);
            }
        }
        for (int p = 0; p < partitions; p++) {
            List<Uuid> dirs = new ArrayList<>();
            for (int b = 0; b < all.size(); b++) {
                dirs.add(Uuid.fromString("AAAAAAAAAAAAAAAAAAAAAA"));  // DirectoryId.UNASSIGNED
            }
            boot.add(new ApiMessageAndVersion(new PartitionRecord().setTopicId(TOPIC_ID).setPartitionId(p)
                .setReplicas(all).setIsr(all).setLeader(-1).setLeaderEpoch(0).setPartitionEpoch(0)
                .setDirectories(dirs), (short) 2));
        }
        QuorumController.Builder builder = new QuorumController.Builder(CONTROLLER_ID, CLUSTER_ID)
            .setTime(clock)
            .setThreadNamePrefix("kraftcheck-controller-")
            .setLogContext(new LogContext("[kraftcheck controller] "))
            .setRaftClient(raft)
            .setQuorumFeatures(new QuorumFeatures(CONTROLLER_ID, QuorumFeatures.defaultSupportedFeatureMap(true),
                List.of(CONTROLLER_ID)))
            .setBootstrapMetadata(BootstrapMetadata.fromRecords(boot, "kraftcheck"))
            .setSessionTimeoutNs(TimeUnit.MILLISECONDS.toNanos(sessionMs))
            .setFenceStaleBrokerIntervalNs(TimeUnit.MILLISECONDS.toNanos(1))
            .setMaxIdleIntervalNs(OptionalLong.empty())
            .setConfigSchema(CONFIG_SCHEMA)
            .setStaticConfig(Map.of("min.insync.replicas", "1"))
            .setLeaderImbalanceCheckIntervalNs(OptionalLong.empty())
            .setFatalFaultHandler((msg, e) -> fault("fatal", msg, e))
            .setNonFatalFaultHandler((msg, e) -> fault("non-fatal", msg, e));
        controller = builder.build();
        raft.becomeLeader(1);
        quiesce();
        while (raft.uncommitted() > 0) {  // the activation batch (bootstrap records) is not a model entry
            raft.commitNext();
            quiesce();
        }
        raft.activationBatches = raft.batches.size();
        ObjectNode ev = event("started");
        ev.put("kafka", org.apache.kafka.common.utils.AppInfoParser.getVersion());
        ev.put("activation_batches", raft.activationBatches);
        emit(ev);
    }

    RuntimeException fault(String kind, String msg, Throwable e) {
        String text = kind + ": " + msg + (e == null ? "" : ": " + e);
        faults.add(text);
        if (e != null) {
            e.printStackTrace();  // stderr: the Python side keeps it for the report
        }
        ObjectNode ev = event("fault");
        ev.put("error", text);
        emit(ev);
        return new RuntimeException(text, e);
    }

    ControllerRequestContext context(ApiKeys api, short version) {
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
            .setClientId("kraftcheck").setCorrelationId((int) nextRequest);
        return new ControllerRequestContext(header, KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
    }

    static Uuid incarnation(int broker, int inc) {
        return new Uuid(1000L + broker, inc);
    }

    static Uuid logDir(int broker) {
        return new Uuid(2000L + broker, 1);
    }

    long register(JsonNode cmd) {
        int broker = cmd.get("broker").asInt();
        int inc = cmd.path("inc").asInt(1);
        BrokerRegistrationRequestData.FeatureCollection features = new BrokerRegistrationRequestData.FeatureCollection();
        for (Map.Entry<String, VersionRange> f : QuorumFeatures.defaultSupportedFeatureMap(true).entrySet()) {
            features.add(new BrokerRegistrationRequestData.Feature().setName(f.getKey())
                .setMinSupportedVersion(f.getValue().min()).setMaxSupportedVersion(f.getValue().max()));
        }
        BrokerRegistrationRequestData.ListenerCollection listeners = new BrokerRegistrationRequestData.ListenerCollection();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT").setHost("localhost")
            .setPort(9092 + broker).setSecurityProtocol((short) 0));
        BrokerRegistrationRequestData req = new BrokerRegistrationRequestData().setBrokerId(broker)
            .setClusterId(CLUSTER_ID).setIncarnationId(incarnation(broker, inc)).setFeatures(features)
            .setListeners(listeners).setLogDirs(List.of(logDir(broker))).setPreviousBrokerEpoch(-1L);
        long id = nextRequest++;
        pending.put(id, new Pending("register", broker,
            controller.registerBroker(context(ApiKeys.BROKER_REGISTRATION, ApiKeys.BROKER_REGISTRATION.latestVersion()), req)));
        return id;
    }

    long heartbeat(JsonNode cmd) throws Exception {
        int broker = cmd.get("broker").asInt();
        JsonNode others = cmd.path("active_offsets");
        if (others.size() > 0) {
            backgroundHeartbeats(others);
        }
        BrokerHeartbeatRequestData req = new BrokerHeartbeatRequestData().setBrokerId(broker)
            .setBrokerEpoch(cmd.get("epoch").asLong()).setCurrentMetadataOffset(cmd.get("offset").asLong())
            .setWantFence(false).setWantShutDown(cmd.path("shutdown").asBoolean(false));
        long id = nextRequest++;
        pending.put(id, new Pending("heartbeat", broker,
            controller.processBrokerHeartbeat(context(ApiKeys.BROKER_HEARTBEAT, ApiKeys.BROKER_HEARTBEAT.latestVersion()), req)));
        return id;
    }

    long alter(JsonNode cmd) {
        int broker = cmd.get("broker").asInt();
        List<AlterPartitionRequestData.BrokerState> isr = new ArrayList<>();
        JsonNode members = cmd.get("isr");
        JsonNode epochs = cmd.get("isr_epochs");
        for (int i = 0; i < members.size(); i++) {
            isr.add(new AlterPartitionRequestData.BrokerState().setBrokerId(members.get(i).asInt())
                .setBrokerEpoch(epochs.get(i).asLong()));
        }
        AlterPartitionRequestData.PartitionData part = new AlterPartitionRequestData.PartitionData()
            .setPartitionIndex(cmd.get("partition").asInt()).setLeaderEpoch(cmd.get("le").asInt())
            .setPartitionEpoch(cmd.get("pe").asInt()).setNewIsrWithEpochs(isr).setLeaderRecoveryState((byte) 0);
        AlterPartitionRequestData req = new AlterPartitionRequestData().setBrokerId(broker)
            .setBrokerEpoch(cmd.get("epoch").asLong());
        req.topics().add(new AlterPartitionRequestData.TopicData().setTopicId(TOPIC_ID).setPartitions(List.of(part)));
        long id = nextRequest++;
        pending.put(id, new Pending("alter", broker,
            controller.alterPartition(context(ApiKeys.ALTER_PARTITION, ApiKeys.ALTER_PARTITION.latestVersion()), req)));
        return id;
    }

    /** An operator's AlterPartitionReassignments for one partition: {@code target} replicas, or null (a cancel). */
    long reassign(JsonNode cmd) {
        AlterPartitionReassignmentsRequestData.ReassignablePartition part =
            new AlterPartitionReassignmentsRequestData.ReassignablePartition()
                .setPartitionIndex(cmd.get("partition").asInt());
        JsonNode target = cmd.get("target");
        if (target == null || target.isNull()) {
            part.setReplicas(null);
        } else {
            List<Integer> replicas = new ArrayList<>();
            target.forEach(r -> replicas.add(r.asInt()));
            part.setReplicas(replicas);
        }
        AlterPartitionReassignmentsRequestData req = new AlterPartitionReassignmentsRequestData();
        req.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName(TOPIC)
            .setPartitions(List.of(part)));
        long id = nextRequest++;
        pending.put(id, new Pending("reassign", -1, controller.alterPartitionReassignments(
            context(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, ApiKeys.ALTER_PARTITION_REASSIGNMENTS.latestVersion()),
            req)));
        return id;
    }

    /** The other running brokers' periodic heartbeats, which change nothing but the metadata offset the controller
     *  holds for them: on the controller's thread, each active broker (unfenced, not shutting down) in
     *  {@code [[id, offset], ...]} is touched with that offset (BrokerHeartbeatManager.touch, as
     *  ReplicationControlManager.processBrokerHeartbeat does for an UNFENCED -> UNFENCED heartbeat). The controller
     *  model reads a running broker's current offset in lowestActiveOffset (model/controller/heartbeats.py): this
     *  makes that true before a heartbeat that may read it. */
    void backgroundHeartbeats(JsonNode others) throws Exception {
        controller.appendReadEvent("kraftcheck-background-heartbeats", OptionalLong.empty(), () -> {
            BrokerHeartbeatManager hm = controller.clusterControl().heartbeatManager();
            for (BrokerHeartbeatManager.BrokerHeartbeatState st : new ArrayList<>(hm.brokers())) {
                for (JsonNode o : others) {
                    if (o.get(0).asInt() == st.id() && !st.fenced() && !st.shuttingDown()) {
                        hm.touch(st.id(), false, o.get(1).asLong());
                    }
                }
            }
            return null;
        }).get(10, TimeUnit.SECONDS);
    }

    /** Broker {@code broker}'s session expires and no other's does: on the controller's thread, the clock moves past
     *  the session timeout and every other registered broker's contact time is renewed at the new time (what the
     *  background heartbeats that change nothing do: QuorumController.processBrokerHeartbeat updates the tracker's
     *  contact time before it queues the heartbeat); the periodic maybeFenceStaleBroker task then runs. */
    void expire(JsonNode cmd) throws Exception {
        int broker = cmd.get("broker").asInt();
        controller.appendReadEvent("kraftcheck-expire", OptionalLong.empty(), () -> {
            clock.advance(sessionMs + 1);
            BrokerHeartbeatTracker tracker = controller.clusterControl().heartbeatManager().tracker();
            for (BrokerRegistration reg : controller.clusterControl().brokerRegistrations().values()) {
                if (reg.id() != broker) {
                    tracker.updateContactTime(new BrokerIdAndEpoch(reg.id(), reg.epoch()));
                }
            }
            return null;
        }).get(10, TimeUnit.SECONDS);
    }

    /** Append read events until the controller's queue has nothing more to do (a read event runs after every event
     *  queued before it, and after every deferred event already due). */
    void quiesce() throws Exception {
        String last = null;
        for (int i = 0; i < 50; i++) {
            String now = controller.appendReadEvent("kraftcheck-barrier", OptionalLong.empty(),
                () -> raft.batches.size() + "/" + raft.committed + "/" + controllerDigest()).get(10, TimeUnit.SECONDS);
            if (now.equals(last)) {
                return;
            }
            last = now;
        }
        throw new IllegalStateException("the controller did not quiesce");
    }

    String controllerDigest() {
        return controller.clusterControl().brokerRegistrations().toString() + controller.curClaimEpoch();
    }

    void replies() {
        List<Long> done = new ArrayList<>();
        for (Map.Entry<Long, Pending> e : pending.entrySet()) {
            CompletableFuture<?> f = e.getValue().future();
            if (!f.isDone()) {
                continue;
            }
            done.add(e.getKey());
            ObjectNode ev = event("reply");
            ev.put("id", e.getKey());
            ev.put("kind", e.getValue().kind());
            ev.put("broker", e.getValue().broker());
            try {
                HarnessJson.describeReply(f.get(), ev);
            } catch (Exception ex) {
                Throwable cause = ex.getCause() == null ? ex : ex.getCause();
                ev.put("error", Errors.forException(cause).name());
                ev.put("message", String.valueOf(cause.getMessage()));
            }
            emit(ev);
        }
        done.forEach(pending::remove);
    }

    ObjectNode state() throws Exception {
        ObjectNode st = event("state");
        if (controller == null) {
            return st;
        }
        ObjectNode view = controller.appendReadEvent("kraftcheck-state", OptionalLong.empty(), () -> {
            ObjectNode v = JSON.createObjectNode();
            ObjectNode regs = v.putObject("brokers");
            for (BrokerRegistration r : new TreeMap<>(controller.clusterControl().brokerRegistrations()).values()) {
                ObjectNode b = regs.putObject(String.valueOf(r.id()));
                b.put("epoch", r.epoch());
                b.put("incarnation", r.incarnationId().toString());
                b.put("fenced", r.fenced());
                b.put("in_controlled_shutdown", r.inControlledShutdown());
            }
            ArrayNode parts = v.putArray("partitions");
            for (int p = 0; p < partitions; p++) {
                PartitionRegistration reg = controller.replicationControl().getPartition(TOPIC_ID, p);
                ObjectNode o = parts.addObject();
                o.put("leader", reg.leader);
                ArrayNode isr = o.putArray("isr");
                for (int m : reg.isr) {
                    isr.add(m);
                }
                ArrayNode reps = o.putArray("replicas");
                for (int m : reg.replicas) {
                    reps.add(m);
                }
                o.put("le", reg.leaderEpoch);
                o.put("pe", reg.partitionEpoch);
            }
            v.put("active", controller.isActive());
            v.put("claim_epoch", controller.curClaimEpoch());
            return v;
        }).get(10, TimeUnit.SECONDS);
        st.setAll(view);
        HarnessJson.writeLog(st, raft);
        st.put("hw", Math.max(0, raft.committed - raft.activationBatches));
        st.put("resigned", raft.resigned);
        st.put("now_ms", clock.milliseconds());
        ArrayNode waiting = st.putArray("pending");
        pending.keySet().forEach(waiting::add);
        ArrayNode fs = st.putArray("faults");
        faults.forEach(fs::add);
        return st;
    }

    void close() throws InterruptedException {
        if (controller != null) {
            controller.beginShutdown();
            controller.close();
            controller = null;
        }
    }

    void handle(JsonNode cmd) throws Exception {
        String name = cmd.get("cmd").asText();
        switch (name) {
            case "start" -> start(cmd);
            case "register", "heartbeat", "alter", "reassign" -> {
                long id = switch (name) {
                    case "register" -> register(cmd);
                    case "heartbeat" -> heartbeat(cmd);
                    case "alter" -> alter(cmd);
                    default -> reassign(cmd);
                };
                ObjectNode ev = event("sent");
                ev.put("id", id);
                emit(ev);
                quiesce();
            }
            case "commit" -> {
                if (raft.uncommitted() == 0) {
                    throw new IllegalStateException("nothing to commit");
                }
                raft.commitNext();
                quiesce();
            }
            case "expire" -> {
                expire(cmd);
                quiesce();
            }
            case "state" -> { }
            case "version" -> {
                ObjectNode ev = event("version");
                ev.put("kafka", org.apache.kafka.common.utils.AppInfoParser.getVersion());
                emit(ev);
                return;
            }
            default -> throw new IllegalArgumentException("unknown command " + name);
        }
        if (controller != null) {
            replies();
        }
        emit(state());
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
            StandardCharsets.UTF_8);
        System.setOut(new PrintStream(java.io.OutputStream.nullOutputStream()));  // nothing but events on stdout
        ControllerHarness h = new ControllerHarness(out);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            JsonNode cmd;
            try {
                cmd = JSON.readTree(line);
            } catch (Exception e) {
                ObjectNode ev = h.event("error");
                ev.put("error", "not JSON: " + e.getMessage());
                out.println(ev);
                out.println("{\"ev\":\"done\"}");
                continue;
            }
            if (cmd.path("cmd").asText().equals("quit")) {
                h.close();
                out.println("{\"ev\":\"done\"}");
                break;
            }
            try {
                h.handle(cmd);
            } catch (Exception e) {
                ObjectNode ev = h.event("error");
                ev.put("error", e.toString());
                out.println(ev);
            }
            out.println("{\"ev\":\"done\"}");
        }
        h.close();
        System.exit(0);
    }
}
