"""Fairness of the reassignment model (ZooKeeper mode, seed 001): what the controller and the replicas do eventually
once faults stop.  ``ReassignmentEventuallyEnds`` (spec/reassign_liveness.py) assumes every family below.

* the controller's event loop handles every queued event: a watch event (deliver_requests, deliver_legacy), the
  requests it has read (process) and the ISR change that covers the target (complete) are weakly fair
  (KafkaController's ControllerEventManager drains its queue; PartitionReassignmentIsrChangeHandler queues an event
  on every partition state change);
* a replica of the assignment fetches from a live leader and joins the ISR (catch_up, ReplicaFetcherThread with
  Partition.maybeExpandIsr): weakly fair;
* with no /controller, a candidate wins the election (elect, KafkaController.elect on the ControllerChangeHandler
  watch); a zombie whose session expired notices and resigns (resign, the Expired state change): weakly fair;
* a crashed replica broker is restarted (broker_restart): weakly fair.  This is an assumption about the operator's
  process supervisor, not the protocol: in Kafka a reassignment whose target broker never comes back waits for it
  (or for a cancel, an operator step), so without it the property fails, as it should;
* controller crash, session expiry and broker crash are faults that eventually stop (``finite``): their budgets in
  ``Used`` only grow, so they cannot lie on a cycle anyway; the family says so in the fairness itself;
* client submissions (a new reassignment, a change, a cancel) are operator steps and are not fair, but they do
  eventually stop (``finite`` "clients"): an operator who changes the target forever keeps a reassignment in
  progress forever, trivially, in the unbounded protocol, and the property is not about that.  ``max_requests``
  makes them finite here anyway; the family states the assumption so that it does not hide in the bound.  ``idle``
  has no fairness.

No bound cut: no budget disables a step the protocol takes to finish a reassignment.  ``max_requests`` and
``max_legacy`` bound the clients and the fault budgets bound the faults, both declared finite; the controller's and the
replicas' steps have no counter, and zxids and request names are not in the encoding (``symmetry.py``), so a graph
cycle is a cycle of the unbounded protocol too.  Whole families, so a reduction keeps its soundness argument
(``checker/liveness/__init__.py``).
"""

from __future__ import annotations

from kraftcheck.model.fairness import Fairness, finite, weak

FAIRNESS: tuple[Fairness, ...] = (
    weak("deliver_requests", ("deliver_requests",),
         doc="the child watch's event is handled (ControllerEventManager: ReassignmentRequests)"),
    weak("deliver_legacy", ("deliver_legacy",),
         doc="the /admin/reassign_partitions watch's event is handled (ControllerEventManager: "
             "ZkPartitionReassignment)"),
    weak("process", ("process",), doc="the controller processes the requests it has read (its event loop)"),
    weak("complete", ("complete",),
         doc="the ISR change is handled: maybeCompleteReassignment (PartitionReassignmentIsrChange event)"),
    weak("catch_up", ("catch_up",),
         doc="a replica fetches from a live leader and joins the ISR (ReplicaFetcherThread)"),
    weak("elect", ("elect",), doc="with no /controller a candidate is elected (KafkaController.elect on its watch)"),
    weak("resign", ("resign",), doc="a controller whose session expired notices and resigns (Expired state change)"),
    weak("broker_restart", ("broker_restart",), doc="a crashed replica broker is restarted (operator's supervisor)"),
    finite("faults", ("controller_crash", "session_expire", "broker_crash"),
           doc="controller crash, session expiry and broker crash eventually stop (budgeted)"),
    finite("clients", ("submit",), doc="the operator eventually stops submitting changes and cancels (budgeted)"),
)
