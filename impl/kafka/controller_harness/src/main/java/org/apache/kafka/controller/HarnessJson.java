package org.apache.kafka.controller;

import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.FenceBrokerRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.server.common.ApiMessageAndVersion;

/** The harness's JSON forms: the metadata log with each record abstracted (the first half of the abstraction
 *  function, impl/kafka/controller_abstraction.py), and the controller's replies. */
final class HarnessJson {
    static final com.fasterxml.jackson.databind.ObjectMapper JSON = ControllerHarness.JSON;

    private HarnessJson() {
    }

    static void ints(ArrayNode out, int[] values) {
        for (int v : values) {
            out.add(v);
        }
    }

    // ---- state ------------------------------------------------------------------------------------------------

    static JsonNode recordJson(ApiMessage data, short version) {
        try {
            Class<?> conv = Class.forName(data.getClass().getName() + "JsonConverter");
            return (JsonNode) conv.getMethod("write", data.getClass(), short.class).invoke(null, data, version);
        } catch (ReflectiveOperationException e) {
            return JSON.getNodeFactory().textNode(data.toString());
        }
    }

    /** The batches after the activation batch, each record as Kafka wrote it and abstracted. */
    static void writeLog(ObjectNode st, HarnessRaft raft) {
        ArrayNode log = st.putArray("log");
        Map<Integer, PartitionRegistration> parts = new TreeMap<>();  // replayed here to give each change's result
        for (int i = 0; i < raft.batches.size(); i++) {
            HarnessRaft.Stored b = raft.batches.get(i);
            ObjectNode o = i < raft.activationBatches ? null : log.addObject();
            ArrayNode recs = o == null ? null : o.putArray("records");
            ArrayNode abs = o == null ? null : o.putArray("abstract");
            long offset = b.base();
            for (ApiMessageAndVersion r : b.records()) {
                ApiMessage m = r.message();
                ArrayNode a = JSON.createArrayNode();
                if (m instanceof PartitionRecord pr) {
                    parts.put(pr.partitionId(), new PartitionRegistration(pr));
                } else if (m instanceof PartitionChangeRecord pc) {
                    PartitionRegistration next = parts.get(pc.partitionId()).merge(pc);
                    parts.put(pc.partitionId(), next);
                    boolean assign = pc.replicas() != null || pc.addingReplicas() != null
                        || pc.removingReplicas() != null;
                    a.add(assign ? "assign" : "part").add(pc.partitionId()).add(next.leader);
                    ints(a.addArray(), next.isr);
                    a.add(next.leaderEpoch).add(next.partitionEpoch);
                    if (assign) {  // KIP-455: the registration's replicas, adding and removing after the change
                        ints(a.addArray(), next.replicas);
                        ints(a.addArray(), next.addingReplicas);
                        ints(a.addArray(), next.removingReplicas);
                    }
                } else if (m instanceof RegisterBrokerRecord rb) {
                    a.add("reg").add(rb.brokerId()).add(rb.incarnationId().getLeastSignificantBits());
                } else if (m instanceof BrokerRegistrationChangeRecord ch) {
                    String kind = ch.fenced() == 1 ? "fence" : ch.fenced() == -1 ? "unfence"
                        : ch.inControlledShutdown() == 1 ? "cs" : "change";
                    a.add(kind).add(ch.brokerId()).add(ch.brokerEpoch());
                } else if (m instanceof FenceBrokerRecord fb) {
                    a.add("fence").add(fb.id()).add(fb.epoch());
                } else if (m instanceof UnfenceBrokerRecord ub) {
                    a.add("unfence").add(ub.id()).add(ub.epoch());
                } else {
                    a.add(m.getClass().getSimpleName());
                }
                if (o != null) {
                    ObjectNode rec = recs.addObject();
                    rec.put("type", m.getClass().getSimpleName());
                    rec.put("offset", offset);
                    rec.set("data", recordJson(m, r.version()));
                    abs.add(a);
                }
                offset++;
            }
            if (o != null) {
                o.put("base", b.base());
                o.put("last", b.last());
                o.put("epoch", b.epoch());
            }
        }
        if (!raft.batches.isEmpty()) {
            st.put("activation_end", raft.batches.get(raft.activationBatches - 1).last());
        }
    }

    /** A completed request's answer as data. */
    static void describeReply(Object r, ObjectNode ev) {
        if (r instanceof BrokerRegistrationReply reg) {
            ev.put("epoch", reg.epoch());
        } else if (r instanceof BrokerHeartbeatReply hb) {
            ev.put("fenced", hb.isFenced());
            ev.put("caught_up", hb.isCaughtUp());
            ev.put("in_controlled_shutdown", hb.inControlledShutdown());
            ev.put("shutdown", hb.shouldShutDown());
        } else if (r instanceof AlterPartitionReassignmentsResponseData ar) {
            ev.put("error", Errors.forCode(ar.errorCode()).name());
            for (AlterPartitionReassignmentsResponseData.ReassignableTopicResponse t : ar.responses()) {
                for (AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse p : t.partitions()) {
                    ev.put("partition_error", Errors.forCode(p.errorCode()).name());
                }
            }
        } else if (r instanceof AlterPartitionResponseData ap) {
            ev.put("error", Errors.forCode(ap.errorCode()).name());
            for (AlterPartitionResponseData.TopicData t : ap.topics()) {
                for (AlterPartitionResponseData.PartitionData p : t.partitions()) {
                    ev.put("partition_error", Errors.forCode(p.errorCode()).name());
                    ev.put("leader", p.leaderId());
                    ev.put("le", p.leaderEpoch());
                    ev.put("pe", p.partitionEpoch());
                    ArrayNode isr = ev.putArray("isr");
                    p.isr().forEach(isr::add);
                }
            }
        }
    }
}
