package org.apache.kafka.raft;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.AbstractConfig;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.network.ListenerName;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.Readable;
import org.apache.kafka.common.protocol.Writable;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.common.serialization.RecordSerde;

/**
 * kraftcheck's deterministic harness around N released {@link KafkaRaftClient}s in one JVM (issue 31).
 *
 * <p>Every source of nondeterminism is the driver's: each node has its own clock (a timer fires only when the driver
 * advances that node's clock), its own seeded {@link Random}, and a message queue that never blocks; the network
 * holds every message in flight until the driver delivers, drops or duplicates it, and numbers what a command sent in
 * a canonical order, not in Kafka's, which can follow a set the JVM salts at startup (see {@link #CANONICAL}); a node
 * runs one round of its event loop ({@link KafkaRaftClient#poll()}) only when told. A crash drops the client; a restart builds a new one from the
 * node's quorum-state file (Kafka's own {@link FileQuorumStateStore}) and its durable log.
 *
 * <p>Protocol: one JSON command a line on stdin, answered by JSON event lines on stdout ending with a
 * {@code {"ev":"state",...}} line and a {@code {"ev":"done"}} line. See impl/kafka/harness.py for the commands.
 * This class is in package org.apache.kafka.raft to reach the package-private constructor that takes the message
 * queue and the Random, and {@link KafkaRaftClient#quorum()}, as Kafka's RaftClientTestContext does.
 */
public final class Harness {
    static final ObjectMapper JSON = new ObjectMapper();
    static final ListenerName LISTENER = ListenerName.normalised("CONTROLLER");

    /** A message in flight: a request (src asks dst) or a response (src answers dst). */
    record Message(long id, boolean request, int src, int dst, int correlationId, ApiMessage data) { }

    /** A message a node sent during the current command, not yet on the network: a request carries the correlation
     *  id Kafka gave it, a response the network's correlation id of the request it answers. */
    record Outgoing(boolean request, int src, int dst, int correlationId, ApiMessage data) { }

    /** The order in which a command's messages enter the network: responses first, then by source, destination and
     *  API. Not Kafka's order: KafkaRaftClient sends a round of requests by iterating over a set of voters that can
     *  be a java.util.ImmutableCollections set, whose iteration order is salted by System.nanoTime() when the JVM
     *  starts (4.2's LeaderState.needToSendBeginQuorumRequests collects to Collectors.toUnmodifiableSet()). */
    static final Comparator<Outgoing> CANONICAL = Comparator
        .comparing((Outgoing o) -> o.request())
        .thenComparingInt(Outgoing::src)
        .thenComparingInt(Outgoing::dst)
        .thenComparingInt(o -> o.data().apiKey());

    /** A node's clock: moves only when the driver says so. */
    static final class Clock implements Time {
        long ms = 0;

        public long milliseconds() {
            return ms;
        }

        public long nanoseconds() {
            return ms * 1_000_000L;
        }

        public void sleep(long d) {
            ms += d;
        }

        public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
            if (!condition.get()) {
                throw new IllegalStateException("harness clock cannot wait");
            }
        }
    }

    /** A message queue that never blocks: poll returns the head or nothing, and remembers the timeout it was given. */
    static final class Queue implements RaftMessageQueue {
        final ArrayDeque<RaftMessage> items = new ArrayDeque<>();
        long lastTimeoutMs = 0;

        public RaftMessage poll(long timeoutMs) {
            lastTimeoutMs = timeoutMs;
            return items.poll();
        }

        public void add(RaftMessage message) {
            items.add(message);
        }

        public boolean isEmpty() {
            return items.isEmpty();
        }

        public void wakeup() {
        }
    }

    /** Futures failed when the node's clock passes their deadline (Kafka's MockExpirationService, rewritten). */
    static final class Expirations implements ExpirationService {
        final Clock clock;
        final TreeMap<Long, List<CompletableFuture<?>>> due = new TreeMap<>();

        Expirations(Clock clock) {
            this.clock = clock;
        }

        public <T> CompletableFuture<T> failAfter(long timeoutMs) {
            CompletableFuture<T> f = new CompletableFuture<>();
            due.computeIfAbsent(clock.ms + timeoutMs, k -> new ArrayList<>()).add(f);
            return f;
        }

        void expire() {
            while (!due.isEmpty() && due.firstKey() <= clock.ms) {
                for (CompletableFuture<?> f : due.pollFirstEntry().getValue()) {
                    f.completeExceptionally(new TimeoutException("expired"));
                }
            }
        }
    }

    /** Kafka's FileQuorumStateStore, remembering what it last wrote or read (the persisted vote and epoch). */
    final class Store implements QuorumStateStore {
        final int node;
        final FileQuorumStateStore file;
        ElectionState last;

        Store(int node, File f) {
            this.node = node;
            this.file = new FileQuorumStateStore(f);
        }

        public Optional<ElectionState> readElectionState() {
            Optional<ElectionState> s = file.readElectionState();
            last = s.orElse(null);
            return s;
        }

        public void writeElectionState(ElectionState state, org.apache.kafka.server.common.KRaftVersion v) {
            file.writeElectionState(state, v);
            last = state;
            ObjectNode e = event("persist");
            e.put("node", node);
            e.put("epoch", state.epoch());
            e.put("leader", state.optionalLeaderId().orElse(-1));
            e.put("voted", state.optionalVotedKey().map(ReplicaKey::id).orElse(-1));
            emit(e);
        }

        public Path path() {
            return file.path();
        }

        public void clear() {
            file.clear();
            last = null;
        }
    }

    /** Records are strings (UTF-8), as in Kafka's own raft tests. */
    static final class StringSerde implements RecordSerde<String> {
        public int recordSize(String data, ObjectSerializationCache cache) {
            return data.getBytes(StandardCharsets.UTF_8).length;
        }

        public void write(String data, ObjectSerializationCache cache, Writable out) {
            out.writeByteArray(data.getBytes(StandardCharsets.UTF_8));
        }

        public String read(Readable input, int size) {
            return new String(input.readArray(size), StandardCharsets.UTF_8);
        }
    }

    /** One voter: its persistent parts (log, quorum-state file, correlation ids) and its current incarnation. */
    final class Voter {
        final int id;
        final HarnessLog log = new HarnessLog();
        final Clock clock = new Clock();
        final File stateFile;
        /** Correlation ids as Kafka numbers them (in its own, possibly salted, order of sending) ... */
        int nextKafkaCorrelationId = 0;
        /** ... and as the network numbers them (in the canonical order): the events and the peers see these. */
        int nextCorrelationId = 0;
        /** The network's correlation id of each request this node sent -> Kafka's: a response is handed back to
         *  Kafka with the id Kafka expects (RequestManager matches it by equality only). */
        final Map<Integer, Integer> kafkaCorrelationIds = new HashMap<>();
        int incarnation = 0;
        /** An observer: a node with an id that is not in the voter set (a broker fetching the metadata log). */
        boolean observer;
        KafkaRaftClient<String> client;
        Queue queue;
        Expirations expirations;
        Store store;
        String failure;

        Voter(int id, File dir) {
            this.id = id;
            this.stateFile = new File(dir, "quorum-state-" + id);
            log.listener = ev -> logEvent(this.id, ev);
        }

        boolean up() {
            return client != null;
        }
    }

    final PrintStream out;
    final Map<Integer, Voter> voters = new TreeMap<>();
    final LinkedHashMap<Long, Message> inflight = new LinkedHashMap<>();
    final List<Outgoing> outbox = new ArrayList<>();
    long nextMessageId = 0;
    long seed = 0;
    Map<String, Object> config = new HashMap<>();
    File dir;

    Harness(PrintStream out) {
        this.out = out;
    }

    ObjectNode event(String kind) {
        ObjectNode e = JSON.createObjectNode();
        e.put("ev", kind);
        return e;
    }

    void emit(ObjectNode e) {
        out.println(e.toString());
    }

    void logEvent(int node, String[] ev) {
        ObjectNode e = event(ev[0]);
        e.put("node", node);
        switch (ev[0]) {
            case "append":
                e.put("as", ev[1]);
                e.put("base", Long.parseLong(ev[2]));
                e.put("last", Long.parseLong(ev[3]));
                e.put("epoch", Integer.parseInt(ev[4]));
                e.put("control", Boolean.parseBoolean(ev[5]));
                break;
            case "truncate":
                e.put("to", Long.parseLong(ev[1]));
                e.put("leo", Long.parseLong(ev[2]));
                break;
            default:
                e.put("hw", Long.parseLong(ev[1]));
        }
        emit(e);
    }

    static Node nodeOf(int id) {
        return new Node(id, "localhost", 9990 + id);
    }

    // ----- building a node's client --------------------------------------------------------------------------

    void start(Voter v) throws Exception {
        v.incarnation += 1;
        v.failure = null;
        v.queue = new Queue();
        v.expirations = new Expirations(v.clock);
        v.store = new Store(v.id, v.stateFile);
        v.log.reopen();
        // the static voter set (controller.quorum.voters): observers are not in it, they fetch from any voter
        // (KafkaRaftClient.maybeSendAnyVoterFetch) and never stand for election
        Map<Integer, InetSocketAddress> addresses = new TreeMap<>();
        for (Voter n : voters.values()) {
            if (!n.observer) {
                addresses.put(n.id, InetSocketAddress.createUnresolved("localhost", 9990 + n.id));
            }
        }
        Map<String, Object> props = new HashMap<>(config);
        AbstractConfig ac = new AbstractConfig(QuorumConfig.CONFIG_DEF, props, false);
        QuorumConfig qc = new QuorumConfig(ac);
        final Voter self = v;
        NetworkChannel channel = new NetworkChannel() {
            public int newCorrelationId() {
                return self.nextKafkaCorrelationId++;
            }

            public void send(RaftRequest.Outbound request) {
                outbox.add(new Outgoing(true, self.id, request.destination().id(), request.correlationId(),
                    request.data()));
            }

            public ListenerName listenerName() {
                return LISTENER;
            }
        };
        Endpoints local = Endpoints.fromInetSocketAddresses(
            Map.of(LISTENER, InetSocketAddress.createUnresolved("localhost", 9990 + v.id)));
        Constructor<?> ctor = null;
        for (Constructor<?> c : KafkaRaftClient.class.getDeclaredConstructors()) {
            if (c.getParameterCount() == 18) {
                ctor = c;
            }
        }
        if (ctor == null) {
            throw new IllegalStateException("no 18-argument KafkaRaftClient constructor in this Kafka version");
        }
        ctor.setAccessible(true);
        @SuppressWarnings("unchecked")
        KafkaRaftClient<String> client = (KafkaRaftClient<String>) ctor.newInstance(
            OptionalInt.of(v.id), new Uuid(1L, v.id), new StringSerde(), channel, v.queue, v.log, MemoryPool.NONE, v.clock,
            v.expirations, 0 /* fetchMaxWaitMs: answers at once, no purgatory (FIDELITY Q22) */, true, "kraftcheck",
            Collections.emptyList(), local, ${harness.features}.KRAFT_VERSION.supportedVersionRange(),
            new LogContext("[node " + v.id + "] "), new Random(seed * 1_000_003L + v.id * 7919L + v.incarnation), qc);
        Method init = null;
        for (Method m : KafkaRaftClient.class.getMethods()) {
            if (m.getName().equals("initialize")) {
                init = m;
            }
        }
        Metrics metrics = new Metrics(v.clock);
        if (init.getParameterCount() == 3) {
            init.invoke(client, addresses, v.store, metrics);
        } else {
            Class<?> ext = init.getParameterTypes()[3];
            Object noop = Proxy.newProxyInstance(ext.getClassLoader(), new Class<?>[] {ext}, (p, m, a) -> null);
            init.invoke(client, addresses, v.store, metrics, noop);
        }
        v.client = client;
    }

    // ----- network ---------------------------------------------------------------------------------------------

    /** Put what the nodes sent during the command on the network, in the canonical order, a request under the next
     *  correlation id of its sender's connection numbering; so that message ids, correlation ids and events do not
     *  depend on the order in which Kafka iterated (see CANONICAL). */
    void flush() {
        List<Outgoing> out = new ArrayList<>(outbox);
        outbox.clear();
        out.sort(CANONICAL);
        for (Outgoing o : out) {
            int correlationId = o.correlationId();
            if (o.request()) {
                Voter src = voters.get(o.src());
                correlationId = src.nextCorrelationId++;
                src.kafkaCorrelationIds.put(correlationId, o.correlationId());
            }
            post(o.request(), o.src(), o.dst(), correlationId, o.data());
        }
    }

    void post(boolean request, int src, int dst, int correlationId, ApiMessage data) {
        Message m = new Message(nextMessageId++, request, src, dst, correlationId, data);
        inflight.put(m.id(), m);
        ObjectNode e = event("send");
        e.put("id", m.id());
        e.put("kind", request ? "request" : "response");
        e.put("src", src);
        e.put("dst", dst);
        e.put("corr", correlationId);
        e.put("api", org.apache.kafka.common.protocol.ApiKeys.forId(data.apiKey()).name());
        e.set("data", toJson(data));
        if (data instanceof org.apache.kafka.common.message.FetchResponseData f) {
            // the JSON form leaves the records out: how many a Fetch answer carries
            int records = 0;
            for (var topic : f.responses()) {
                for (var p : topic.partitions()) {
                    if (p.records() instanceof org.apache.kafka.common.record.Records r) {
                        for (var batch : r.batches()) {
                            for (var ignored : batch) {
                                records++;
                            }
                        }
                    }
                }
            }
            e.put("records", records);
        }
        emit(e);
    }

    static JsonNode toJson(ApiMessage data) {
        try {
            Class<?> conv = Class.forName(data.getClass().getName() + "JsonConverter");
            Method w = conv.getMethod("write", data.getClass(), short.class);
            return (JsonNode) w.invoke(null, data, data.highestSupportedVersion());
        } catch (ReflectiveOperationException ex) {
            return JSON.getNodeFactory().textNode(data.toString());
        }
    }

    void deliver(long id, boolean keep) {
        Message m = keep ? inflight.get(id) : inflight.remove(id);
        if (m == null) {
            throw new IllegalArgumentException("no message " + id + " in flight");
        }
        Voter dst = voters.get(m.dst());
        ObjectNode e = event(keep ? "dup" : "deliver");
        e.put("id", id);
        e.put("up", dst.up());
        emit(e);
        if (!dst.up()) {
            return; // sent to a crashed node: lost
        }
        if (m.request()) {
            short version = m.data().highestSupportedVersion();
            RaftRequest.Inbound in = new RaftRequest.Inbound(LISTENER, m.correlationId(), version, m.data(),
                dst.clock.ms);
            final int incarnation = dst.incarnation;
            in.completion.whenComplete((resp, ex) -> {
                if (resp != null && dst.incarnation == incarnation && dst.up()) {
                    outbox.add(new Outgoing(false, m.dst(), m.src(), m.correlationId(), resp.data()));
                }
            });
            dst.client.handle(in);
        } else {
            Integer kafkaId = dst.kafkaCorrelationIds.get(m.correlationId());
            if (kafkaId == null) {
                throw new IllegalStateException("response " + id + " answers no request node " + dst.id + " sent");
            }
            dst.queue.add(new RaftResponse.Inbound(kafkaId, m.data(), nodeOf(m.src())));
        }
    }

    // ----- observation -----------------------------------------------------------------------------------------

    static boolean is(QuorumState q, String method) {
        try {
            return (Boolean) QuorumState.class.getMethod(method).invoke(q);
        } catch (NoSuchMethodException ex) {
            return false;
        } catch (ReflectiveOperationException ex) {
            throw new IllegalStateException(ex);
        }
    }

    static String role(QuorumState q) {
        if (q.isLeader()) {
            return "Leader";
        } else if (q.isFollower()) {
            return "Follower";
        } else if (q.isCandidate()) {
            return "Candidate";
        } else if (q.isResigned()) {
            return "Resigned";
        } else if (is(q, "isProspective")) {
            return "Prospective";
        } else if (q.isUnattachedAndVoted()) {
            return "Voted";
        } else {
            return "Unattached";
        }
    }

    ObjectNode nodeState(Voter v) {
        ObjectNode n = JSON.createObjectNode();
        n.put("up", v.up());
        n.put("observer", v.observer);
        n.put("time", v.clock.ms);
        if (v.failure != null) {
            n.put("failure", v.failure);
        }
        ArrayNode log = n.putArray("log");
        for (HarnessLog.Batch b : v.log.batches()) {
            for (long o = b.base(); o <= b.last(); o++) {
                int i = (int) (o - b.base());
                log.addArray().add(o).add(b.epoch()).add(i < b.values().length ? b.values()[i] : -1);
            }
        }
        n.put("leo", v.log.endOffset().offset());
        if (!v.up()) {
            // what a restart reads back: the quorum-state file
            ElectionState p = v.store == null ? null : v.store.last;
            n.put("epoch", p == null ? 0 : p.epoch());
            n.put("leader", p == null ? -1 : p.optionalLeaderId().orElse(-1));
            n.put("voted", p == null ? -1 : p.optionalVotedKey().map(ReplicaKey::id).orElse(-1));
            return n;
        }
        QuorumState q = v.client.quorum();
        n.put("role", role(q));
        n.put("epoch", q.epoch());
        n.put("leader", q.leaderId().orElse(-1));
        ElectionState persisted = v.store.last;
        n.put("voted", persisted == null ? -1 : persisted.optionalVotedKey().map(ReplicaKey::id).orElse(-1));
        n.put("hw", v.client.highWatermark().orElse(-1));
        n.put("next_timer", v.queue.lastTimeoutMs);
        n.put("pending", v.queue.items.size());
        return n;
    }

    void state() {
        ObjectNode e = event("state");
        ObjectNode nodes = e.putObject("nodes");
        for (Voter v : voters.values()) {
            nodes.set(Integer.toString(v.id), nodeState(v));
        }
        ArrayNode ids = e.putArray("inflight");
        for (long id : inflight.keySet()) {
            ids.add(id);
        }
        emit(e);
    }

    // ----- commands --------------------------------------------------------------------------------------------

    Voter voter(JsonNode cmd) {
        Voter v = voters.get(cmd.path("node").asInt(-1));
        if (v == null) {
            throw new IllegalArgumentException("no node " + cmd.path("node") + " (voters: " + voters.keySet() + ")");
        }
        return v;
    }

    Voter upVoter(JsonNode cmd) {
        Voter v = voter(cmd);
        if (!v.up()) {
            throw new IllegalArgumentException("node " + v.id + " is down");
        }
        return v;
    }

    void poll(Voter v) {
        try {
            v.client.poll();
        } catch (RuntimeException ex) {
            // Kafka's raft thread would die here (e.g. truncation below the high watermark, FIDELITY Q24).
            v.failure = ex.getClass().getName() + ": " + ex.getMessage();
            v.client = null;
            ObjectNode e = event("raised");
            e.put("node", v.id);
            e.put("error", v.failure);
            emit(e);
        }
    }

    void advance(Voter v, long ms) {
        v.clock.ms += Math.max(0, ms);
        v.expirations.expire();
    }

    void command(JsonNode cmd) throws Exception {
        try {
            run(cmd);
        } finally {
            flush();
        }
    }

    void run(JsonNode cmd) throws Exception {
        String name = cmd.path("cmd").asText();
        switch (name) {
            case "start": {
                for (Voter v : voters.values()) {
                    if (v.up()) {
                        v.client.close();
                    }
                }
                voters.clear();
                inflight.clear();
                outbox.clear();
                nextMessageId = 0;
                seed = cmd.path("seed").asLong(0);
                dir = new File(cmd.path("dir").asText());
                dir.mkdirs();
                config = new HashMap<>();
                Iterator<Map.Entry<String, JsonNode>> it = cmd.path("config").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> f = it.next();
                    config.put(f.getKey(), f.getValue().asText());
                }
                for (JsonNode id : cmd.path("voters")) {
                    Voter v = new Voter(id.asInt(), dir);
                    v.stateFile.delete();
                    if (cmd.path("read_batches").asInt(0) > 0) {
                        v.log.readBatches = cmd.path("read_batches").asInt();
                    }
                    voters.put(v.id, v);
                }
                for (JsonNode id : cmd.path("observers")) {
                    Voter v = new Voter(id.asInt(), dir);
                    v.stateFile.delete();
                    v.observer = true;
                    if (cmd.path("read_batches").asInt(0) > 0) {
                        v.log.readBatches = cmd.path("read_batches").asInt();
                    }
                    if (voters.put(v.id, v) != null) {
                        throw new IllegalArgumentException("observer " + v.id + " is also a voter");
                    }
                }
                for (Voter v : voters.values()) {
                    start(v);
                }
                break;
            }
            case "poll":
                poll(upVoter(cmd));
                break;
            case "tick":
                advance(upVoter(cmd), cmd.path("ms").asLong());
                break;
            case "fire": {
                // Advance the node's clock to the deadline its last poll asked to wait for, then poll once.
                Voter v = upVoter(cmd);
                advance(v, v.queue.lastTimeoutMs);
                poll(v);
                break;
            }
            case "deliver":
                deliver(cmd.path("id").asLong(), false);
                break;
            case "dup":
                deliver(cmd.path("id").asLong(), true);
                break;
            case "drop": {
                long id = cmd.path("id").asLong();
                if (inflight.remove(id) == null) {
                    throw new IllegalArgumentException("no message " + id + " in flight");
                }
                ObjectNode e = event("drop");
                e.put("id", id);
                emit(e);
                break;
            }
            case "append": {
                Voter v = upVoter(cmd);
                ObjectNode e = event("client_append");
                e.put("node", v.id);
                try {
                    int epoch = v.client.quorum().epoch();
                    long offset = v.client.prepareAppend(epoch, List.of(cmd.path("value").asText("x")));
                    v.client.schedulePreparedAppend();
                    e.put("accepted", true);
                    e.put("offset", offset);
                } catch (RuntimeException ex) {
                    e.put("accepted", false);
                    e.put("error", ex.getClass().getSimpleName());
                }
                emit(e);
                break;
            }
            case "resign": {
                // A graceful resignation (KafkaRaftClient.resign: the leader resigns at its next poll and sends
                // EndQuorumEpoch, KIP-595), as a controller shutting down asks for it
                Voter v = upVoter(cmd);
                ObjectNode e = event("resign");
                e.put("node", v.id);
                int epoch = v.client.quorum().epoch();
                e.put("epoch", epoch);
                v.client.resign(epoch);
                emit(e);
                break;
            }
            case "crash": {
                Voter v = upVoter(cmd);
                v.client = null; // nothing flushed is lost: the log is durable (FIDELITY Q27)
                ObjectNode e = event("crash");
                e.put("node", v.id);
                emit(e);
                // its connections close with it: what was in flight to it is lost, as the model's restart loses it
                // (faults.restart); delivering it to the next incarnation would be a harness artefact
                Iterator<Map.Entry<Long, Message>> msgs = inflight.entrySet().iterator();
                while (msgs.hasNext()) {
                    Message m = msgs.next().getValue();
                    if (m.dst() == v.id) {
                        msgs.remove();
                        ObjectNode d = event("drop");
                        d.put("id", m.id());
                        d.put("crash", true);
                        emit(d);
                    }
                }
                break;
            }
            case "restart": {
                Voter v = voter(cmd);
                if (v.up()) {
                    throw new IllegalArgumentException("node " + v.id + " is up; crash it first");
                }
                start(v);
                ObjectNode e = event("restart");
                e.put("node", v.id);
                emit(e);
                break;
            }
            case "state":
                break;
            case "version": {
                ObjectNode e = event("version");
                e.put("kafka", org.apache.kafka.common.utils.AppInfoParser.getVersion());
                // this JVM's salted iteration order of immutable sets (java.util.ImmutableCollections.SALT32L,
                // REVERSE): what the network's canonical order makes irrelevant; tests compare JVMs that differ here
                e.put("set_order", List.copyOf(Set.of(1, 2)) + " " + List.copyOf(Set.of(1, 2, 3)));
                emit(e);
                break;
            }
            default:
                throw new IllegalArgumentException("unknown command '" + name + "'");
        }
    }

    public static void main(String[] args) throws Exception {
        PrintStream stdout = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
            StandardCharsets.UTF_8);
        // Kafka's logging goes to stderr (or nowhere): stdout carries only the protocol.
        System.setOut(new PrintStream(System.err, true, StandardCharsets.UTF_8));
        Harness h = new Harness(stdout);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode cmd;
            try {
                cmd = JSON.readTree(line);
                if (cmd.path("cmd").asText().equals("quit")) {
                    break;
                }
                h.command(cmd);
                h.state();
            } catch (Exception ex) {
                Throwable cause = ex instanceof java.lang.reflect.InvocationTargetException ? ex.getCause() : ex;
                ObjectNode e = h.event("error");
                e.put("error", cause.getClass().getName() + ": " + cause.getMessage());
                h.emit(e);
            }
            h.emit(h.event("done"));
            stdout.flush();
        }
        stdout.flush();
    }
}
