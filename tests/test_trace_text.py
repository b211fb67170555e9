"""The readable trace: only what changed at each step, bags of messages diffed as multisets, records with a kind
shown as Kind(field=value), logs of entries shown whole."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from kraftcheck.checker.traces.text import diff, render, show
from kraftcheck.checker.traces.trace import Step, Trace
from kraftcheck.model import Context, Model


@attrs.frozen
class NoBounds:
    pass


def msg(kind: str, src: int, dst: int) -> dict[str, Any]:
    return {"kind": kind, "src": src, "dst": dst}


def test_a_record_with_a_kind_reads_as_a_call() -> None:
    assert show(msg("Fetch", 1, 0)) == "Fetch(src=1, dst=0)"
    assert show({"a": 1, "b": [1, 2]}) == "(a=1, b=[1, 2])"


def test_a_bag_is_diffed_as_a_multiset() -> None:
    before = {"net": [msg("Fetch", 1, 0), msg("Vote", 0, 2), msg("Vote", 0, 2)], "hw": 0}
    after = {"net": [msg("Vote", 0, 2), msg("FetchResponse", 0, 1)], "hw": 1}
    lines = diff(before, after, frozenset({"net"}))
    assert lines == [
        "  - net: Fetch(src=1, dst=0)",
        "  - net: Vote(src=0, dst=2)",  # one of the two copies left
        "  + net: FetchResponse(src=0, dst=1)",
        "    hw: 0 -> 1",
    ]
    # without the bag declaration the same change is positional churn
    assert "    net[0]: Fetch(src=1, dst=0) -> Vote(src=0, dst=2)" in diff(before, after)


def test_a_log_of_entries_is_one_value() -> None:
    assert diff({"log": []}, {"log": [[1, 0]]}) == ["    log: [] -> [[1, 0]]"]


def test_render_uses_the_models_bags() -> None:
    m: Model[tuple[int, ...], NoBounds] = Model(
        "bagged", NoBounds, view=lambda s: {"net": [msg("Ping", 0, x) for x in s]}, bags=("net",)
    )

    @m.init
    def start(b: NoBounds) -> Iterator[tuple[int, ...]]:
        yield ()

    @m.action
    def send(s: tuple[int, ...], ctx: Context[NoBounds]) -> Iterator[tuple[int, ...]]:
        yield s + (1,)

    trace = Trace((), [Step("send", {}, (1,)), Step("send", {}, (1, 1))])
    text = render(trace, m)
    assert "    net = {}" in text
    assert text.count("  + net: Ping(src=0, dst=1)") == 2


def test_quorum_message_parameters_read_as_messages() -> None:
    """A receive step names the message it consumes exactly as the net bag shows it leaving, not as a raw tuple."""
    from kraftcheck.checker.api import check
    from kraftcheck.model.quorum import QUORUM
    from kraftcheck.model.quorum.state import KIND_NAMES

    r = check("quorum", variants=["double-vote"])
    assert r.trace is not None
    lines = render(r.trace, QUORUM).splitlines()
    receives = [i for i, line in enumerate(lines) if line.startswith("Step ") and ": receive_" in line]
    assert receives
    for i in receives:
        consumed = lines[i].split("(msg=", 1)[1][:-1]  # Step k: receive_x(msg=Kind(...))
        assert consumed.split("(", 1)[0] in KIND_NAMES.values(), lines[i]
        step_diff = lines[i + 1:next((j for j in range(i + 1, len(lines)) if lines[j].startswith("Step ")),
                                     len(lines))]
        assert f"  - net: {consumed}" in step_diff, lines[i]
