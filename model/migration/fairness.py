"""Fairness of the migration model: what the migration driver and the cluster do eventually once faults stop.

* every step of the migration driver is weakly fair (KRaftMigrationDriver polls its state machine and retries a
  failed ZooKeeper operation, "will retry"): check_quorum, check_brokers, claim and its separate /migration write
  (claim_migration), the copy (copy_begin, copy_batch, copy_commit) and its /migration offset write (copy_record),
  sync_to_zk, send_rpcs, dual_write and its /migration offset write (dual_write_offset);
* a controller learns of a newer leader, a crashed controller is restarted, ZooKeeper comes back after an outage, a
  ZK broker registers with the KRaft quorum, and the active controller writes the final ZkMigrationRecord once it
  may: weakly fair;
* an election happens when no controller is active (KIP-595 election timeout; ``when`` narrows kraft_elect to that
  situation, so that a healthy leader is never forced out);
* operator steps (reconfigure, roll_to_kraft, the rollback, starting the incompatible broker), client writes, ZK-mode
  controllers and every fault have no fairness: they may happen within their budgets, which only grow;
* starting the incompatible broker (``broker_join``), the one operator step without a budget, eventually stops
  (``joins-stop``, finite): a broker the KRaft quorum refuses shuts down, and an operator restarting it for ever
  would hold the migration in WAIT_FOR_BROKERS (KRaftMigrationDriver waits for every ZK broker in /brokers/ids);
* ``beyond-max-epoch`` is the bound cut: no controller active and ``max_epoch`` reached, so the election the protocol
  would hold next is beyond the model.  A behaviour that ends there is not judged.

Whole families, so liveness keeps the symmetry reduction over controller ids.
"""

from __future__ import annotations

from typing import Any

from kraftcheck.model.fairness import Fairness, finite, strong, weak
from kraftcheck.model.migration.state import MigState, is_active


def no_active_controller(s: MigState) -> bool:
    return not (s.leader >= 0 and is_active(s, s.leader))


def _leaderless(s: MigState, params: dict[str, Any], ctx: Any) -> bool:
    return no_active_controller(s)


def beyond_max_epoch(s: MigState, ctx: Any) -> bool:
    return s.kepoch >= ctx.b.max_epoch and no_active_controller(s)


_DRIVER = ("check_quorum", "check_brokers", "claim", "claim_migration", "copy_begin", "copy_batch", "copy_commit",
           "copy_record", "sync_to_zk", "send_rpcs", "dual_write", "dual_write_offset")

FAIRNESS: tuple[Fairness, ...] = (
    *(weak(a, (a,), doc=f"the migration driver's {a} step (KRaftMigrationDriver retries)") for a in _DRIVER),
    weak("learn_leader", ("learn_leader",), doc="a controller learns of the newer leader epoch"),
    weak("recover", ("recover",), doc="a crashed controller is restarted"),
    weak("zk_restore", ("zk_restore",), doc="a ZooKeeper outage ends"),
    weak("register_broker", ("register_broker",), doc="a ZK broker registers with the KRaft quorum"),
    weak("finalize", ("finalize",), doc="the active controller writes the final ZkMigrationRecord once it may"),
    weak("election", ("kraft_elect",), when=_leaderless, doc="with no active controller, an election happens"),
    strong("beyond-max-epoch", ("idle",), cut=beyond_max_epoch,
           doc="the bound cut: the election after max_epoch is a step the model cannot take"),
    finite("joins-stop", ("broker_join",),
           doc="the operator eventually stops restarting the incompatible broker, which has no budget: otherwise, "
               "with join_in_dual_write_only off, a broker refused by the KRaft quorum and restarted for ever keeps "
               "the driver in WAIT_FOR_BROKERS (a lasso the deep profile's first measurement found)"),
)
