"""The seed's drop computation (KafkaController.onPartitionReassignment as revised by seed 001).

    osr = assigned -- isr;  existing = List(leader) ++ isr ++ osr, de-duplicated keeping the first occurrence;
    drop = assigned -- existing[0:top-1]

The seed does not say whether ``[0:top-1]`` is an inclusive index range (the first ``top`` replicas: indices 0 to
top-1) or a Scala/Python slice (the first ``top-1``).  Its own example ([1,2] -> [2,3] -> [2,4] drops 3 and keeps 1
and 2) only works out with the inclusive reading, which the model takes; the exclusive slice is the mutation
``slice-off-by-one``.  A replica of the new target is never dropped (it would be re-added at once): the model's
reading of "the set of replicas which *can* be dropped".
"""

from __future__ import annotations


def existing(assigned: tuple[int, ...], leader: int, isr: tuple[int, ...]) -> tuple[int, ...]:
    """``List(leader) ++ isr ++ osr`` without duplicates (osr sorted), the leader only if it is a replica."""
    osr = tuple(sorted(r for r in assigned if r not in isr))
    out: list[int] = []
    for r in ((leader,) if leader in assigned else ()) + isr + osr:
        if r not in out:
            out.append(r)
    return tuple(out)


def drop(assigned: tuple[int, ...], leader: int, isr: tuple[int, ...], top: int, target: tuple[int, ...],
         off_by_one: bool = False, keep_nothing: bool = False) -> tuple[int, ...]:
    """The replicas to drop from ``assigned`` when the reassignment (re)targets ``target``."""
    keep = () if keep_nothing else existing(assigned, leader, isr)[: top - 1 if off_by_one else top]
    return tuple(r for r in assigned if r not in keep and r not in target)


def apply(assigned: tuple[int, ...], dropped: tuple[int, ...], target: tuple[int, ...]) -> tuple[int, ...]:
    """The new assignment: the kept replicas, then the target's new ones (RS = kept ++ (target -- kept))."""
    kept = tuple(r for r in assigned if r not in dropped)
    return kept + tuple(r for r in target if r not in kept)
