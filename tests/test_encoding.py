"""The default state encoding: exact (equal values encode equally, different values differently), the same in every
process whatever its hash seed, memoised safely, and versioned in Spark checkpoints."""

from __future__ import annotations

import enum
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraftcheck.checker.errors import UsageError
from kraftcheck.model import encoding
from kraftcheck.model.encoding import ENCODING_VERSION, STRUCT_TAG, clear_memo, stable_encode

ROOT = Path(__file__).resolve().parents[1]


class Color(enum.Enum):
    RED = 1
    BLUE = "blue"


class Prio(enum.IntEnum):
    LOW = 1
    HIGH = 2


@attrs.frozen
class Msg:
    src: int
    kind: str
    body: Any = None


@attrs.frozen
class Other:  # same fields as Msg, another class: never the same encoding
    src: int
    kind: str
    body: Any = None


class Pair(NamedTuple):
    a: int
    b: Any


scalars = (st.integers(-(2**70), 2**70) | st.integers(-3, 3) | st.booleans() | st.none() | st.text(max_size=3)
           | st.binary(max_size=3) | st.sampled_from(list(Color)) | st.sampled_from(list(Prio)))
hashable = st.recursive(
    scalars,
    lambda inner: (st.lists(inner, max_size=3).map(tuple) | st.frozensets(inner, max_size=3)
                   | st.builds(Msg, st.integers(0, 3), st.sampled_from(["a", "b"]), inner)
                   | st.builds(Other, st.integers(0, 3), st.sampled_from(["a", "b"]), inner)
                   | st.builds(Pair, st.integers(0, 2), inner)),
    max_leaves=8,
)
values = st.recursive(
    hashable,
    lambda inner: st.dictionaries(hashable, inner, max_size=3) | st.lists(inner, max_size=3).map(tuple),
    max_leaves=10,
)


def _key(v: Any) -> Any:
    """A value's identity with its types spelled out: Python's ``==`` says ``True == 1`` and
    ``Msg(0, 'a') == Msg(0, 'a')`` whatever class; the encoding must tell them apart as this key does."""
    t = type(v)
    if isinstance(v, enum.Enum):
        return ("enum", t.__name__, v.name)
    if t in (int, str, bool, bytes) or v is None:
        return (t.__name__, v)
    if t is tuple or t is list:
        return ("tuple", tuple(_key(x) for x in v))
    if t is frozenset or t is set:
        return ("set", frozenset(_key(x) for x in v))
    if t is dict:
        return ("dict", frozenset((_key(k), _key(x)) for k, x in v.items()))
    if attrs.has(t):
        return (t.__name__, tuple(_key(getattr(v, a.name)) for a in attrs.fields(t)))
    if isinstance(v, tuple):
        return (t.__name__, tuple(_key(x) for x in v))
    raise AssertionError(t)


@settings(max_examples=400, deadline=None)
@given(values, values)
def test_equal_values_encode_equally_and_different_values_differently(a: Any, b: Any) -> None:
    ea, eb = stable_encode(a), stable_encode(b)
    assert (ea == eb) == (_key(a) == _key(b)), (a, b)
    clear_memo()
    assert stable_encode(a) == ea  # the memo never changes an encoding


@settings(max_examples=200, deadline=None)
@given(st.frozensets(hashable, max_size=5))
def test_a_set_encodes_the_same_whatever_order_it_was_built_in(s: frozenset[Any]) -> None:
    items = list(s)
    assert stable_encode(frozenset(reversed(items))) == stable_encode(s)
    assert stable_encode({i: 0 for i in reversed(items)}) == stable_encode({i: 0 for i in items})


def test_bools_ints_and_enums_stay_apart() -> None:
    assert stable_encode((True, 1)) != stable_encode((1, 1))
    assert stable_encode(frozenset({True})) != stable_encode(frozenset({1}))
    assert stable_encode(Msg(0, "a", True)) != stable_encode(Msg(0, "a", 1))
    assert stable_encode(Msg(0, "a", Prio.LOW)) != stable_encode(Msg(0, "a", 1))
    assert stable_encode(Msg(0, "a", Color.RED)) != stable_encode(Msg(0, "a", 1))
    assert stable_encode(Msg(0, "a")) != stable_encode(Other(0, "a"))
    assert stable_encode(Msg(0, "a")).startswith(STRUCT_TAG)


def test_the_memo_survives_id_reuse() -> None:
    """The memo keys by ``id`` but holds its objects, so a freed object's id cannot be taken by a new value while the
    entry exists; after a clear, encodings are recomputed."""
    first = stable_encode(Msg(1, "a", (1, 2)))
    for i in range(2000):  # make and drop many short-lived values: ids get reused by CPython
        assert stable_encode(Msg(i % 3, "b", (i,))) == stable_encode(Msg(i % 3, "b", (i,)))
    assert stable_encode(Msg(1, "a", (1, 2))) == first
    clear_memo()
    assert not encoding._MEMO
    assert stable_encode(Msg(1, "a", (1, 2))) == first


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoding, "MEMO_LIMIT", 50)
    clear_memo()
    for i in range(500):
        stable_encode(Msg(i, "a", (i, frozenset({i}))))
    assert len(encoding._MEMO) <= 50 + 10


def test_unsupported_values_are_refused() -> None:
    with pytest.raises(TypeError, match=r"a state holds a float at state\[0\], which the stable encoding cannot"):
        stable_encode((1.5, frozenset()))


GOLDEN = (
    "from kraftcheck.model.encoding import stable_encode\n"
    "import attrs, sys\n"
    "@attrs.frozen\n"
    "class M:\n"
    "    src: int\n"
    "    to: frozenset\n"
    "    tag: str\n"
    "s = (frozenset({M(1, frozenset({'a', 'bb', 'ccc'}), 'x'), M(2, frozenset(), 'yy')}),\n"
    "     {'k' + str(i): frozenset(str(j) for j in range(i)) for i in range(6)}, (True, None, 2**80))\n"
    "sys.stdout.write(stable_encode(s).hex())\n"
)


def test_encodings_are_identical_across_hash_seeds() -> None:
    """Spark executors, checkpoints and resumed runs compare fingerprints made in other processes: the encoding of
    sets of strs and of records (whose iteration order follows the salted str hash) must not depend on it."""
    outs = {
        subprocess.run([sys.executable, "-c", GOLDEN], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed, "PATH": "", "PYTHONPATH": str(ROOT)}).stdout
        for seed in ("0", "1", "2", "3", "12345")
    }
    assert len(outs) == 1
    assert bytes.fromhex(outs.pop()).startswith(STRUCT_TAG)


def test_an_old_checkpoint_is_refused_with_one_line(tmp_path: Path) -> None:
    """A checkpoint written before the encoding changed holds fingerprints of other bytes: resuming into it would mix
    them.  Its meta has no (or another) encoding version, so resume refuses it, naming the field."""
    from kraftcheck.checker.spark.checkpoint import Checkpoint

    meta = {"model": "m", "code": "c", "variants": [], "bounds": {}, "partitions": 2, "deadlock": True,
            "spec_ref": "x", "kraftcheck": "0"}
    old = Checkpoint(tmp_path)
    old.prepare(meta, resume=False)  # as the driver wrote it before the encoding version joined its identity
    old.unlock()
    new = Checkpoint(tmp_path)
    with pytest.raises(UsageError, match=r"differs in encoding\)") as info:
        new.prepare({**meta, "encoding": ENCODING_VERSION}, resume=True)
    new.unlock()
    assert "\n" not in str(info.value)
    stored = json.loads((tmp_path / "meta.json").read_text())
    assert "encoding" not in stored


def test_the_spark_driver_stamps_the_encoding_version() -> None:
    """The Spark run's identity dict (``checkpoint.identity``, which the driver stamps on every checkpoint) names the
    encoding (read from the sources: running it needs Java)."""
    text = (ROOT / "checker" / "spark" / "checkpoint.py").read_text()
    assert '"encoding": ENCODING_VERSION' in text
    assert "identity(" in (ROOT / "checker" / "spark" / "driver.py").read_text()


def _golden_sample() -> Any:
    m = Msg(1, "vote", (True, None, 2**70, b"x"))
    return Msg(0, "state", (frozenset({(m, 1), (Msg(2, "ack"), 2)}), Pair(3, Color.RED), {"k": frozenset({1, 2})},
                            ("a", "b", "working"), frozenset({"x", "y"}), -5, 10**6))


# stable_encode(_golden_sample()) as the encoder of ENCODING_VERSION 2 wrote it: the generated encoders (issue 20)
# changed how the bytes are made, not the bytes
GOLDEN_V2 = (
    "00015273030000004d7367030000006900000000000000007305000000737461746528070000007b02000000280200000052"
    "73030000004d7367030000006901000000000000007304000000766f74652804000000544e49090000000000000000000000"
    "4062010000007869010000000000000028020000005273030000004d73670300000069020000000000000073030000006163"
    "6b4e6902000000000000005273040000005061697202000000690300000000000000457305000000436f6c6f726901000000"
    "000000003c0100000073010000006b7b02000000690100000000000000690200000000000000280300000073010000006173"
    "01000000627307000000776f726b696e677b0200000073010000007873010000007969fbffffffffffffff6940420f000000"
    "0000"
)


def test_the_bytes_are_those_of_the_previous_encoder() -> None:
    clear_memo()
    assert stable_encode(_golden_sample()).hex() == GOLDEN_V2
    assert stable_encode(_golden_sample()).hex() == GOLDEN_V2  # again, through the memos


def test_pairs_in_a_set_found_by_their_parts_stay_exact() -> None:
    """A set's pairs are looked up by their elements' ids: pairs made afresh from the same objects share an entry,
    equal pairs of other objects of other types (True against 1) do not, nor do ids freed and reused."""
    clear_memo()
    msg = Msg(0, "a")
    one = stable_encode(Msg(0, "bag", frozenset({(msg, 1)})))
    assert stable_encode(Msg(0, "bag", frozenset({(msg, 1)}))) == one  # a new pair, the same parts
    assert stable_encode(Msg(0, "bag", frozenset({(msg, True)}))) != one  # (msg, True) == (msg, 1) in Python
    assert stable_encode(Msg(0, "bag", frozenset({(Msg(0, "a"), 1)}))) == one  # an equal message, another object
    for i in range(2000):  # short-lived parts: CPython reuses their ids, which the entries must not be fooled by
        a = stable_encode(Msg(0, "bag", frozenset({(Msg(i % 5, "x"), i % 3), ("k", (i,))})))
        clear_memo() if i % 500 == 0 else None
        b = stable_encode(Msg(0, "bag", frozenset({(Msg(i % 5, "x"), i % 3), ("k", (i,))})))
        assert a == b
        assert a != stable_encode(Msg(0, "bag", frozenset({(Msg(i % 5, "x"), i % 3 + 1), ("k", (i,))})))


def test_a_named_tuple_is_viewed_as_the_tuple_it_is() -> None:
    """Traces show a NamedTuple record (the controller's metadata records, a /features snapshot) as the list a plain
    tuple gives, so turning a plain tuple into a NamedTuple leaves trace files as they were."""
    assert encoding.to_view(Pair(a=1, b=(2, "x"))) == encoding.to_view((1, (2, "x"))) == [1, [2, "x"]]
