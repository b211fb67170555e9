/*
 * kraftcheck's harness around Kafka 3.9's released ZooKeeper-to-KRaft migration driver (issue 31 item 5).
 *
 * In one JVM: a real ZooKeeper server (the zookeeper jar's ZooKeeperServer, in a fresh temporary directory per
 * start), N released KRaftMigrationDriver instances (kafka-metadata), each with its own real ZkMigrationClient over
 * its own KafkaZkClient session (kafka_2.13), so KRaftMigrationZkWriter's dual writes, the /controller and
 * /controller_epoch claim and every /migration write are Kafka's own.  The harness plays what surrounds the drivers
 * in a KRaft controller: the metadata log and its Raft layer (one log, each record tagged with the leader epoch that
 * appended it; only the active leader appends; an append is committed at once), the MetadataLoader (each driver is
 * published the records of the epochs it knows of, a KIP-868 transaction only once it is ended), the
 * ZkRecordConsumer (QuorumController.MigrationRecordConsumer: BeginTransaction, the batches, ZkMigrationState
 * MIGRATION + EndTransaction), the LegacyPropagator (RPCs to ZK brokers are reported, not sent), and ZK broker 0 (its
 * ephemeral /brokers/ids/0, its ZK-mode /controller claim and its partition-state writes, with the multi shape of
 * KafkaZkClient.updateLeaderAndIsr).
 *
 * Time: the drivers get a clock 10^15 ns ahead of the system clock their KafkaEventQueue schedules against, so their
 * deferred PollEvents never fire by themselves; every command ends by "settling": each driver is polled (its private
 * wakeup(), as the deferred poll would) and its queue run to quiescence, newly committed records are published, and
 * this repeats until nothing changes.  So one command is one external stimulus and everything the drivers then do.
 *
 * JSON lines: one command a line on stdin; events on stdout, each answer ending with a "state" event and a "done"
 * line (impl/kafka/migration_harness.py lists the commands).
 */
package org.apache.kafka.metadata.migration;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import kafka.zk.KafkaZkClient;
import kafka.zk.ZkMigrationClient;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.AbortTransactionRecord;
import org.apache.kafka.common.metadata.BeginTransactionRecord;
import org.apache.kafka.common.metadata.RegisterControllerRecord;
import org.apache.kafka.common.metadata.EndTransactionRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.ZkMigrationStateRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.controller.QuorumFeatures;
import org.apache.kafka.controller.metrics.QuorumControllerMetrics;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.image.loader.LoaderManifest;
import org.apache.kafka.image.loader.LoaderManifestType;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.queue.KafkaEventQueue;
import org.apache.kafka.raft.LeaderAndEpoch;
import org.apache.kafka.raft.OffsetAndEpoch;
import org.apache.kafka.security.PasswordEncoder;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.server.fault.FaultHandler;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.Stat;
import org.apache.zookeeper.server.ServerCnxnFactory;
import org.apache.zookeeper.server.ZooKeeperServer;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

public final class MigrationHarness {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String TOPIC = "foo";
    static final String STATE_PATH = "/brokers/topics/foo/partitions/0/state";
    static final String CONFIG_KEY = "retention.ms";
    // the znodes the state reports (the migration model's, and the topic's assignment)
    static final String[] WATCHED = {"/controller", "/controller_epoch", "/migration", "/brokers/ids/0",
        "/brokers/topics/foo", STATE_PATH, "/config/topics/foo"};

    /** A clock 10^15 ns ahead of the system's: deadlines computed with it are never reached by KafkaEventQueue. */
    static final class FarTime implements Time {
        static final long AHEAD_NS = 1_000_000_000_000_000L;

        @Override public long milliseconds() { return System.currentTimeMillis(); }
        @Override public long nanoseconds() { return System.nanoTime() + AHEAD_NS; }
        @Override public void sleep(long ms) {
            try { Thread.sleep(ms); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        }
        @Override public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs)
                throws InterruptedException {
            synchronized (obj) {
                while (!condition.get()) {
                    long now = milliseconds();
                    if (now >= deadlineMs) throw new org.apache.kafka.common.errors.TimeoutException("wait");
                    obj.wait(deadlineMs - now);
                }
            }
        }
    }

    static final class Entry {
        final long offset;
        final int epoch;
        final ApiMessageAndVersion record;

        Entry(long offset, int epoch, ApiMessageAndVersion record) {
            this.offset = offset;
            this.epoch = epoch;
            this.record = record;
        }
    }

    final class Node {
        final int id;
        KafkaZkClient zkClient;
        KRaftMigrationDriver driver;
        KafkaEventQueue queue;
        volatile boolean installed;
        boolean held;  // its publisher is paused: committed records wait until it is released
        String reported = "UNINITIALIZED";  // its driver state as last reported in a "driver" event
        int knownEpoch;
        MetadataImage image = MetadataImage.EMPTY;
        int published;  // log entries handed to its publisher

        Node(int id) { this.id = id; }

        boolean active() { return leader == id && knownEpoch == kepoch; }
    }

    private final PrintStream out;
    private final List<ObjectNode> events = new ArrayList<>();
    private final ConcurrentLinkedQueue<ObjectNode> async = new ConcurrentLinkedQueue<>();
    private final Time time = new FarTime();
    private Random random = new Random(0);
    // ZooKeeper
    private File zkDir;
    private ServerCnxnFactory factory;
    private ZooKeeper admin;
    private ZooKeeper brokerZk;
    private int brokerCtrlEpoch;         // broker 0 as ZK-mode controller: its controller epoch
    private int brokerCtrlVersion = -1;  // ... and the /controller_epoch version it got (-1: not controller)
    // KRaft
    private Node[] nodes = new Node[0];
    private final List<Entry> log = new ArrayList<>();
    private int leader = -1;
    private int kepoch = 0;
    private int bootstrap = 0;

    MigrationHarness(PrintStream out) { this.out = out; }

    // ---- output ----------------------------------------------------------------------------------------------

    ObjectNode event(String kind) {
        ObjectNode ev = JSON.createObjectNode();
        ev.put("ev", kind);
        return ev;
    }

    void emit(ObjectNode ev) { events.add(ev); }

    void flushAsync() {
        ObjectNode ev;
        while ((ev = async.poll()) != null) events.add(ev);
    }

    // ---- the metadata log (the harness's Raft layer) ------------------------------------------------------

    synchronized long append(int epoch, ApiMessage message) {
        long offset = log.size();
        log.add(new Entry(offset, epoch, new ApiMessageAndVersion(message, message.highestSupportedVersion())));
        ObjectNode ev = event("append");
        ev.put("offset", offset);
        ev.put("epoch", epoch);
        ev.set("record", recordJson(message));
        async.add(ev);
        return offset;
    }

    static ObjectNode recordJson(ApiMessage m) {
        ObjectNode r = JSON.createObjectNode();
        String cls = m.getClass().getName();
        r.put("type", m.getClass().getSimpleName());
        try {
            Class<?> conv = Class.forName(cls + "JsonConverter");
            Method write = conv.getMethod("write", m.getClass(), short.class);
            r.set("data", (JsonNode) write.invoke(null, m, m.highestSupportedVersion()));
        } catch (ReflectiveOperationException e) {
            r.put("data", m.toString());
        }
        return r;
    }

    synchronized boolean txnOpen() {
        boolean open = false;
        for (Entry e : log) {
            ApiMessage m = e.record.message();
            if (m instanceof BeginTransactionRecord) open = true;
            else if (m instanceof EndTransactionRecord || m instanceof AbortTransactionRecord) open = false;
        }
        return open;
    }

    /** QuorumController.MigrationRecordConsumer, as the harness's single metadata log: only the active leader
     * appends (a deposed one gets NotControllerException, as QuorumController's appendWriteEvent would). */
    final class RecordConsumer implements ZkRecordConsumer {
        final Node node;

        RecordConsumer(Node node) { this.node = node; }

        private <T> CompletableFuture<T> refuse(String what) {
            ObjectNode ev = event("refused");
            ev.put("node", node.id);
            ev.put("what", what);
            async.add(ev);
            return CompletableFuture.failedFuture(new org.apache.kafka.common.errors.NotControllerException(
                "node " + node.id + " is not the active controller"));
        }

        @Override public CompletableFuture<?> beginMigration() {
            synchronized (MigrationHarness.this) {
                if (!node.active()) return refuse("beginMigration");
                append(kepoch, new BeginTransactionRecord().setName("ZK Migration"));
                return CompletableFuture.completedFuture(null);
            }
        }

        @Override public CompletableFuture<?> acceptBatch(List<ApiMessageAndVersion> batch) {
            synchronized (MigrationHarness.this) {
                if (!node.active()) return refuse("acceptBatch");
                for (ApiMessageAndVersion r : batch) append(kepoch, r.message());
                return CompletableFuture.completedFuture(null);
            }
        }

        @Override public CompletableFuture<OffsetAndEpoch> completeMigration() {
            synchronized (MigrationHarness.this) {
                if (!node.active()) return refuse("completeMigration");
                append(kepoch, new ZkMigrationStateRecord().setZkMigrationState(ZkMigrationState.MIGRATION.value()));
                long end = append(kepoch, new EndTransactionRecord());
                return CompletableFuture.completedFuture(new OffsetAndEpoch(end, kepoch));
            }
        }

        @Override public void abortMigration() {
            ObjectNode ev = event("abort_migration");
            ev.put("node", node.id);
            async.add(ev);
        }
    }

    /** The LegacyPropagator: RPCs to ZK brokers are reported, not sent. */
    final class Propagator implements LegacyPropagator {
        final Node node;

        Propagator(Node node) { this.node = node; }

        void rpcs(String kind, MetadataImage image, int zkControllerEpoch) {
            ObjectNode ev = event("rpcs");
            ev.put("node", node.id);
            ev.put("kind", kind);
            ev.put("driver", driverState(node));
            ev.put("zk_controller_epoch", zkControllerEpoch);
            ArrayNode to = ev.putArray("brokers");
            for (BrokerRegistration b : image.cluster().brokers().values()) {
                if (b.isMigratingZkBroker()) to.add(b.id());
            }
            async.add(ev);
        }

        @Override public void startup() { }
        @Override public void shutdown() { }
        @Override public void publishMetadata(MetadataImage image) { }
        @Override public void sendRPCsToBrokersFromMetadataDelta(MetadataDelta delta, MetadataImage image,
                                                                 int zkControllerEpoch) {
            rpcs("delta", image, zkControllerEpoch);
        }
        @Override public void sendRPCsToBrokersFromMetadataImage(MetadataImage image, int zkControllerEpoch) {
            rpcs("full", image, zkControllerEpoch);
        }
        @Override public void clear() { }
    }

    /** The real ZkMigrationClient, every call reported with the driver state it was made in (it runs on the
     * driver's thread) and its outcome. */
    MigrationClient observed(Node node, MigrationClient real) {
        return (MigrationClient) Proxy.newProxyInstance(MigrationClient.class.getClassLoader(),
            new Class<?>[]{MigrationClient.class}, (proxy, method, args) -> {
                ObjectNode ev = event("zk_call");
                ev.put("node", node.id);
                ev.put("call", method.getName());
                ev.put("driver", driverState(node));
                try {
                    Object result = method.invoke(real, args);
                    if (result instanceof ZkMigrationLeadershipState) ev.put("result", result.toString());
                    if (!method.getName().endsWith("Client")) async.add(ev);
                    return result;
                } catch (InvocationTargetException e) {
                    ev.put("error", String.valueOf(e.getCause()));
                    async.add(ev);
                    throw e.getCause();
                }
            });
    }

    // ---- reflection into the driver (its state and event queue are private) ---------------------------------

    static Object field(Object o, String name) {
        try {
            Field f = o.getClass().getDeclaredField(name);
            f.setAccessible(true);
            return f.get(o);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    String driverState(Node n) {
        return n.driver == null ? "NONE" : field(n.driver, "migrationState").toString();
    }

    static void wakeup(KRaftMigrationDriver d) {
        try {
            Method m = KRaftMigrationDriver.class.getDeclaredMethod("wakeup");
            m.setAccessible(true);
            m.invoke(d);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The driver's queue holds nothing to run now: no queued event and no running one (its one deferred poll,
     * scheduled on the far clock, is all that is left). */
    static boolean quiet(KafkaEventQueue q) {
        int deferred = q.firstDeferredIfIdling().isPresent() ? 1 : 0;
        return deferred == 1 && q.size() == 1;
    }

    void quiesce(Node n) throws InterruptedException {
        long deadline = System.currentTimeMillis() + 30_000;
        int calm = 0;
        while (calm < 3) {
            if (quiet(n.queue)) calm++;
            else calm = 0;
            if (System.currentTimeMillis() > deadline)
                throw new IllegalStateException("driver " + n.id + " did not quiesce in 30 s");
            Thread.sleep(1);
        }
        // its state transitions as seen at quiet points (the states it passed through on the way show in the
        // zk_call events, each made in the state it names)
        String now = driverState(n);
        if (!now.equals(n.reported)) {
            ObjectNode ev = event("driver");
            ev.put("node", n.id);
            ev.put("from", n.reported);
            ev.put("to", now);
            async.add(ev);
            n.reported = now;
        }
    }

    // ---- the metadata loader --------------------------------------------------------------------------------

    /** Publish to node n the committed records it can see (the epochs it knows of) up to the last point outside a
     * transaction (MetadataLoader holds a KIP-868 transaction back until its end; an aborted one is dropped).
     * Returns whether anything was published. */
    boolean publish(Node n) {
        List<Entry> todo = new ArrayList<>();
        synchronized (this) {
            int visible = 0;
            while (visible < log.size() && log.get(visible).epoch <= n.knownEpoch) visible++;
            int closed = n.published;
            boolean open = false;
            for (int i = n.published; i < visible; i++) {
                ApiMessage m = log.get(i).record.message();
                if (m instanceof BeginTransactionRecord) open = true;
                else if (m instanceof EndTransactionRecord || m instanceof AbortTransactionRecord) open = false;
                if (!open) closed = i + 1;
            }
            if (closed <= n.published) return false;
            todo.addAll(log.subList(n.published, closed));
            n.published = closed;
        }
        boolean snapshot = n.image == MetadataImage.EMPTY;
        MetadataDelta delta = new MetadataDelta(n.image);
        List<ApiMessageAndVersion> txn = null;
        for (Entry e : todo) {
            ApiMessage m = e.record.message();
            if (m instanceof BeginTransactionRecord) {
                txn = new ArrayList<>();
            } else if (m instanceof EndTransactionRecord) {
                if (txn != null) for (ApiMessageAndVersion r : txn) delta.replay(r.message());
                txn = null;
            } else if (m instanceof AbortTransactionRecord) {
                txn = null;
            } else if (txn != null) {
                txn.add(e.record);
            } else {
                delta.replay(m);
            }
        }
        Entry last = todo.get(todo.size() - 1);
        MetadataProvenance provenance = new MetadataProvenance(last.offset, last.epoch, 0L);
        MetadataImage image = delta.apply(provenance);
        n.image = image;
        LoaderManifestType type = snapshot ? LoaderManifestType.SNAPSHOT : LoaderManifestType.LOG_DELTA;
        n.driver.onMetadataUpdate(delta, image, new LoaderManifest() {
            @Override public LoaderManifestType type() { return type; }
            @Override public MetadataProvenance provenance() { return provenance; }
        });
        ObjectNode ev = event("publish");
        ev.put("node", n.id);
        ev.put("upto", last.offset);
        ev.put("snapshot", snapshot);
        emit(ev);
        return true;
    }

    /** Run every driver to a fixpoint: poll each (as its deferred PollEvent would), run its queue dry, publish
     * newly committed records, until a round changes nothing. */
    void settle() throws Exception {
        for (int round = 0; round < 50; round++) {
            String before = fingerprint();
            for (Node n : nodes) quiesce(n);
            boolean published = false;
            for (Node n : nodes) if (n.installed && !n.held) published |= publish(n);
            for (Node n : nodes) quiesce(n);
            for (Node n : nodes) wakeup(n.driver);
            for (Node n : nodes) quiesce(n);
            flushAsync();
            if (!published && before.equals(fingerprint())) return;
        }
        throw new IllegalStateException("the drivers did not settle in 50 rounds");
    }

    String fingerprint() throws Exception {
        StringBuilder sb = new StringBuilder();
        synchronized (this) { sb.append(log.size()); }
        for (Node n : nodes) sb.append(' ').append(driverState(n)).append(field(n.driver, "migrationLeadershipState"));
        for (String p : WATCHED) {
            Stat st = admin.exists(p, false);
            sb.append(' ').append(st == null ? "-" : st.getVersion() + "/" + st.getMzxid());
        }
        return sb.toString();
    }

    // ---- ZooKeeper ------------------------------------------------------------------------------------------

    static byte[] b(String s) { return s.getBytes(StandardCharsets.UTF_8); }

    void createPersistent(ZooKeeper zk, String path, String data) throws Exception {
        zk.create(path, b(data), ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
    }

    ZooKeeper connect() throws Exception {
        CountDownLatch up = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper("127.0.0.1:" + factory.getLocalPort(), 30_000, e -> {
            if (e.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) up.countDown();
        });
        if (!up.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("ZooKeeper did not answer");
        return zk;
    }

    void startZk() throws Exception {
        zkDir = Files.createTempDirectory("kraftcheck-zk").toFile();
        ZooKeeperServer server = new ZooKeeperServer(zkDir, zkDir, 2000);
        factory = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 100);
        factory.startup(server);
        admin = connect();
        // every znode change, reported as an event (a persistent recursive watch of the observer's session)
        admin.addWatch("/", (WatchedEvent e) -> {
            if (e.getPath() == null) return;
            ObjectNode ev = event("znode");
            ev.put("type", e.getType().toString());
            ev.put("path", e.getPath());
            async.add(ev);
        }, AddWatchMode.PERSISTENT_RECURSIVE);
        brokerZk = connect();
    }

    /** The migration model's initial state (model/migration/state.py initial_state): ZK broker 0 online, its
     * ZK-mode controller in controller epoch 1, topic foo (one partition, on broker 0) and its config. */
    void populateZk() throws Exception {
        for (String p : new String[]{"/brokers", "/brokers/ids", "/brokers/topics", "/config", "/config/topics"}) {
            createPersistent(admin, p, "");
        }
        brokerZk.create("/brokers/ids/0", b("{\"version\":5,\"host\":\"localhost\",\"port\":9092,\"jmx_port\":-1,"
            + "\"timestamp\":\"0\",\"endpoints\":[\"PLAINTEXT://localhost:9092\"],"
            + "\"listener_security_protocol_map\":{\"PLAINTEXT\":\"PLAINTEXT\"},\"rack\":null,\"features\":{}}"),
            ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
        createPersistent(admin, "/controller_epoch", "0");
        // KafkaZkClient.registerControllerAndIncrementControllerEpoch: check /controller_epoch, create the
        // ephemeral /controller, bump /controller_epoch, in one multi
        brokerZk.multi(List.of(
            Op.check("/controller_epoch", 0),
            Op.create("/controller", b("{\"version\":2,\"brokerid\":0,\"timestamp\":\"0\",\"kraftControllerEpoch\":-1}"),
                ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL),
            Op.setData("/controller_epoch", b("1"), 0)));
        brokerCtrlEpoch = 1;
        brokerCtrlVersion = 1;
        Uuid topicId = new Uuid(random.nextLong(), random.nextLong());
        createPersistent(admin, "/brokers/topics/foo", "{\"version\":3,\"topic_id\":\"" + topicId
            + "\",\"partitions\":{\"0\":[0]},\"adding_replicas\":{},\"removing_replicas\":{}}");
        createPersistent(admin, "/brokers/topics/foo/partitions", "");
        createPersistent(admin, "/brokers/topics/foo/partitions/0", "");
        createPersistent(admin, STATE_PATH, partitionState(0, 1));
        createPersistent(admin, "/config/topics/foo", "{\"version\":1,\"config\":{\"" + CONFIG_KEY + "\":\"0\"}}");
    }

    static String partitionState(int leaderEpoch, int controllerEpoch) {
        return "{\"controller_epoch\":" + controllerEpoch + ",\"leader\":0,\"version\":1,\"leader_epoch\":"
            + leaderEpoch + ",\"isr\":[0]}";
    }

    // ---- commands -------------------------------------------------------------------------------------------

    void start(JsonNode cmd) throws Exception {
        stop();
        int n = cmd.path("controllers").asInt(2);
        random = new Random(cmd.path("seed").asLong(0));
        startZk();
        populateZk();
        log.clear();
        leader = -1;
        kepoch = 0;
        // the bootstrap metadata (kafka-storage format --release-version 3.9 with migration enabled): the
        // metadata.version, ZkMigrationState PRE_MIGRATION, and the voters' registrations with ZkMigrationReady
        append(0, new FeatureLevelRecord().setName(MetadataVersion.FEATURE_NAME)
            .setFeatureLevel(MetadataVersion.IBP_3_9_IV0.featureLevel()));
        append(0, new ZkMigrationStateRecord().setZkMigrationState(ZkMigrationState.PRE_MIGRATION.value()));
        List<Integer> voters = new ArrayList<>();
        for (int i = 0; i < n; i++) voters.add(i);
        for (int i = 0; i < n; i++) {
            append(0, new RegisterControllerRecord().setControllerId(i)
                .setIncarnationId(new Uuid(random.nextLong(), random.nextLong())).setZkMigrationReady(true));
        }
        bootstrap = log.size();
        nodes = new Node[n];
        for (int i = 0; i < n; i++) {
            Node node = new Node(i);
            nodes[i] = node;
            node.zkClient = KafkaZkClient.apply("127.0.0.1:" + factory.getLocalPort(), false, 30_000, 30_000, 10,
                Time.SYSTEM, "kraftcheck-controller-" + i, new ZKClientConfig(), "kraftcheck" + i,
                "SessionExpireListener", false, true);
            MigrationClient client = observed(node, ZkMigrationClient.apply(node.zkClient, PasswordEncoder.NOOP));
            FaultHandler faults = (msg, cause) -> {
                ObjectNode ev = event("fault");
                ev.put("node", node.id);
                ev.put("message", msg);
                ev.put("cause", String.valueOf(cause));
                async.add(ev);
                return new RuntimeException(msg, cause);
            };
            node.driver = KRaftMigrationDriver.newBuilder()
                .setNodeId(i)
                .setZkRecordConsumer(new RecordConsumer(node))
                .setZkMigrationClient(client)
                .setPropagator(new Propagator(node))
                .setInitialZkLoadHandler(p -> node.installed = true)
                .setFaultHandler(faults)
                .setQuorumFeatures(new QuorumFeatures(i, QuorumFeatures.defaultFeatureMap(true), voters))
                .setConfigSchema(KafkaConfigSchema.EMPTY)
                .setControllerMetrics(new QuorumControllerMetrics(Optional.empty(), time, true))
                .setMinMigrationBatchSize(200)
                .setTime(time)
                .build();
            node.queue = (KafkaEventQueue) field(node.driver, "eventQueue");
            node.driver.start();
        }
        settle();
        ObjectNode ev = event("started");
        ev.put("bootstrap", bootstrap);
        ev.put("zookeeper", "127.0.0.1:" + factory.getLocalPort());
        emit(ev);
    }

    Node node(JsonNode cmd) {
        int i = cmd.path("node").asInt(-1);
        if (i < 0 || i >= nodes.length) throw new IllegalArgumentException("no controller " + i);
        return nodes[i];
    }

    /** A controller wins the election of the next epoch (a KIP-595 election the harness decides); it aborts a
     * metadata transaction its predecessor left open (ActivationRecordsGenerator); the others are not told.
     * Its listener hears of the epoch twice, as KafkaRaftClient's ListenerContext.maybeFireLeaderChange tells it:
     * first as a candidate's (no leader, a higher epoch: fired at the end of the poll that made it a candidate,
     * and with two voters it cannot win in that same poll), then as the leader's, once its publisher has caught up
     * with the log (a held publisher is released). */
    void elect(JsonNode cmd) throws Exception {
        Node n = node(cmd);
        int epoch;
        synchronized (this) {
            kepoch++;
            epoch = kepoch;
            n.knownEpoch = kepoch;
        }
        n.driver.onControllerChange(new LeaderAndEpoch(OptionalInt.empty(), epoch));
        // KafkaRaftClient tells a new leader's listener it leads only once the listener has read up to the epoch's
        // start offset (ListenerContext.maybeFireLeaderChange): the driver first sees everything committed before
        n.held = false;
        quiesce(n);
        if (n.installed) publish(n);
        synchronized (this) {
            leader = n.id;
            if (txnOpen()) append(kepoch, new AbortTransactionRecord().setReason("controller failover"));
        }
        n.driver.onControllerChange(new LeaderAndEpoch(OptionalInt.of(leader), epoch));
        settle();
    }

    /** A controller learns of the current leader and epoch (its Raft listener's handleLeaderChange). */
    void learn(JsonNode cmd) throws Exception {
        Node n = node(cmd);
        synchronized (this) { n.knownEpoch = kepoch; }
        n.driver.onControllerChange(new LeaderAndEpoch(leader < 0 ? OptionalInt.empty() : OptionalInt.of(leader),
            kepoch));
        settle();
    }

    Node activeLeader() {
        if (leader < 0 || !nodes[leader].active()) throw new IllegalArgumentException("no active controller");
        return nodes[leader];
    }

    /** ZK broker 0 registers with the active controller with ZkMigrationReady (ClusterControlManager writes a
     * RegisterBrokerRecord with IsMigratingZkBroker). */
    void register(JsonNode cmd) throws Exception {
        int b = cmd.path("broker").asInt(0);
        activeLeader();
        Stat st = admin.exists("/brokers/ids/" + b, false);
        if (st == null) throw new IllegalArgumentException("broker " + b + " is not registered in ZooKeeper");
        synchronized (this) {
            append(kepoch, new RegisterBrokerRecord().setBrokerId(b).setIsMigratingZkBroker(true)
                .setIncarnationId(new Uuid(random.nextLong(), random.nextLong())).setBrokerEpoch(log.size())
                .setFenced(false));
        }
        settle();
    }

    /** A client's metadata change committed by the active controller: foo-0's leader is re-elected (a
     * PartitionChangeRecord that bumps its leader epoch, which dual writes carry to the partition-state znode). */
    void clientWrite(JsonNode cmd) throws Exception {
        Node n = activeLeader();
        TopicImage topic = n.image.topics().getTopic(TOPIC);
        if (topic == null) throw new IllegalArgumentException("the active controller's image has no topic " + TOPIC);
        synchronized (this) {
            append(kepoch, new PartitionChangeRecord().setTopicId(topic.id()).setPartitionId(0).setLeader(0));
        }
        settle();
    }

    /** ZK broker 0, as ZK-mode controller, writes foo-0's partition state: a multi guarded by the
     * /controller_epoch version it got (KafkaZkClient.updateLeaderAndIsr); BadVersion makes it resign. */
    void zkWrite(JsonNode cmd) throws Exception {
        ObjectNode ev = event("zk_write");
        if (brokerCtrlVersion < 0) {
            ev.put("result", "not controller");
        } else {
            Stat st = new Stat();
            JsonNode state = JSON.readTree(admin.getData(STATE_PATH, false, st));
            int next = state.path("leader_epoch").asInt() + 1;
            try {
                brokerZk.multi(List.of(Op.check("/controller_epoch", brokerCtrlVersion),
                    Op.setData(STATE_PATH, b(partitionState(next, brokerCtrlEpoch)), st.getVersion())));
                ev.put("result", "ok");
            } catch (KeeperException e) {
                ev.put("result", e.code().toString());
                if (e.code() == KeeperException.Code.BADVERSION) brokerCtrlVersion = -1;  // ControllerMovedException
            }
        }
        emit(ev);
        settle();
    }

    void state() throws Exception {
        flushAsync();
        ObjectNode ev = event("state");
        ObjectNode z = ev.putObject("znodes");
        for (String p : admin == null ? new String[0] : WATCHED) {
            Stat st = new Stat();
            try {
                byte[] data = admin.getData(p, false, st);
                ObjectNode node = z.putObject(p);
                node.put("data", data == null ? "" : new String(data, StandardCharsets.UTF_8));
                node.put("version", st.getVersion());
                node.put("ephemeral", st.getEphemeralOwner() != 0);
            } catch (KeeperException.NoNodeException e) {
                // absent
            }
        }
        ev.put("leader", leader);
        ev.put("epoch", kepoch);
        ev.put("bootstrap", bootstrap);
        ev.put("zk_controller_version", brokerCtrlVersion);
        ArrayNode ds = ev.putArray("drivers");
        for (Node n : nodes) {
            ObjectNode d = ds.addObject();
            d.put("node", n.id);
            d.put("state", driverState(n));
            d.put("leadership", field(n.driver, "migrationLeadershipState").toString());
            d.put("epoch", n.knownEpoch);
            d.put("published", n.published);
            d.put("held", n.held);
        }
        ArrayNode entries = ev.putArray("log");
        synchronized (this) {
            for (Entry e : log) {
                ObjectNode o = entries.addObject();
                o.put("offset", e.offset);
                o.put("epoch", e.epoch);
                o.set("record", recordJson(e.record.message()));
            }
        }
        events.add(ev);
    }

    void stop() throws Exception {
        for (Node n : nodes) {
            if (n.driver != null) n.driver.close();
            if (n.zkClient != null) n.zkClient.close();
        }
        nodes = new Node[0];
        if (brokerZk != null) brokerZk.close();
        if (admin != null) admin.close();
        if (factory != null) factory.shutdown();
        brokerZk = null;
        admin = null;
        factory = null;
        brokerCtrlVersion = -1;
        if (zkDir != null) {
            try (var walk = Files.walk(zkDir.toPath())) {
                walk.sorted(Comparator.reverseOrder()).map(java.nio.file.Path::toFile).forEach(File::delete);
            }
            zkDir = null;
        }
        async.clear();
    }

    void handle(JsonNode cmd) throws Exception {
        String c = cmd.path("cmd").asText();
        switch (c) {
            case "start": start(cmd); break;
            case "elect": elect(cmd); break;
            case "learn": learn(cmd); break;
            case "register": register(cmd); break;
            case "client_write": clientWrite(cmd); break;
            case "zk_write": zkWrite(cmd); break;
            case "zk_resign": {
                // ZK broker 0 sees /controller change (its watch fires) and resigns as ZK-mode controller
                brokerCtrlVersion = -1;
                settle();
                break;
            }
            case "poll": settle(); break;
            case "hold": {
                // the node's MetadataLoader falls behind: what is committed from now on reaches its driver only
                // when it is released (the delay between a commit and its publication, which Kafka does not bound)
                node(cmd).held = true;
                break;
            }
            case "release": {
                node(cmd).held = false;
                settle();
                break;
            }
            case "state": break;
            case "version": {
                ObjectNode ev = event("version");
                ev.put("kafka", org.apache.kafka.common.utils.AppInfoParser.getVersion());
                emit(ev);
                break;
            }
            default: throw new IllegalArgumentException("unknown command '" + c + "'");
        }
    }

    void run() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            JsonNode cmd = JSON.readTree(line);
            if ("quit".equals(cmd.path("cmd").asText())) break;
            events.clear();
            try {
                handle(cmd);
                state();
            } catch (Exception e) {
                events.clear();
                ObjectNode ev = event("error");
                ev.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                events.add(ev);
            }
            for (ObjectNode ev : events) out.println(JSON.writeValueAsString(ev));
            out.println("{\"ev\":\"done\"}");
            out.flush();
        }
        stop();
    }

    public static void main(String[] args) throws Exception {
        // stdout carries the JSON lines only: anything a library prints goes to stderr
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        System.setProperty("zookeeper.admin.enableServer", "false");
        new MigrationHarness(out).run();
        System.exit(0);
    }
}
