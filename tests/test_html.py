"""Counterexamples as HTML sequence diagrams, loaded in a real headless browser (Debian's chromium, driven by
selenium through the system chromedriver: nothing is downloaded at run time).  The README's test command installs
the browser when it is missing (``.ci/install-browser``); a browser that cannot start fails this test with one line,
never a skip."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kraftcheck import Context, Diagram, Model, check
from kraftcheck.checker.cli.main import main
from kraftcheck.checker.traces.html import build, from_trace, render_html
from kraftcheck.checker.traces.trace import execute
from kraftcheck.spec.registry import load

INSTALL = "install it with .ci/install-browser (apt-get install -y chromium chromium-driver)"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not chromium or not driver_path:
        pytest.fail(f"the browser test needs chromium and chromedriver, not found on PATH: {INSTALL}", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1600,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
    except WebDriverException as exc:
        pytest.fail(f"chromium could not be started: {exc.msg or exc}".splitlines()[0], pytrace=False)
    yield driver
    driver.quit()


def load_page(browser: Any, path: Path) -> None:
    browser.get(path.resolve().as_uri())
    errors = [e for e in browser.get_log("browser") if e.get("level") in ("SEVERE", "ERROR")]
    assert not errors, errors
    assert browser.find_element("css selector", "#diagram").is_displayed()


def count(browser: Any, selector: str) -> int:
    return len(browser.find_elements("css selector", selector))


def badge(browser: Any, node: str, step: int) -> str:
    """The role/epoch badge drawn on ``node``'s lifeline at ``step`` (its lines joined), "" if none."""
    found = browser.find_elements("css selector", f'svg .status[data-node="{node}"][data-step="{step}"] text')
    return " ".join(" ".join(s.text for s in e.find_elements("css selector", "tspan")) for e in found)


def labels(browser: Any) -> list[str]:
    """Every arrow's label, its lines joined."""
    return [" ".join(s.text for s in e.find_elements("css selector", "tspan"))
            for e in browser.find_elements("css selector", "svg .arrow .msg-label")]


def box(browser: Any, element: Any) -> dict[str, float]:
    return dict(browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom};",
        element))


def intersect(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x0"] < b["x1"] and b["x0"] < a["x1"] and a["y0"] < b["y1"] and b["y0"] < a["y1"]


def test_a_quorum_counterexample_in_the_browser(browser: Any, tmp_path: Path) -> None:
    page = tmp_path / "cex.html"
    # at the fault-free bounds of the hand-derived 7-step scenario (the fault-on defaults make it 8 steps)
    fault_free = ["--set", "max_msgs=2", "--set", "loss=false", "--set", "max_dups=0", "--set", "max_restarts=0"]
    assert main(["check", "quorum", "--variant", "double-vote", *fault_free, "--quiet", "--trace-out", str(page)]) == 12
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text  # no network
    load_page(browser, page)
    # the 7-step double vote: voter 0 and voter 1 both time out; voter 2 grants both (tests/golden, README)
    assert count(browser, "svg .lifeline") == 3
    # Vote 0->1, Vote 0->2, VoteResponse 2->0, Vote 1->2, VoteResponse 2->1, and Vote 0->1 again: voter 0 elected
    # makes its unanswered Vote stale (cur=false, Kafka's RequestManager forgets it), a change of the message
    assert count(browser, "svg .arrow.msg") == 6
    assert count(browser, "svg .arrow.msg.delivered") == 4
    assert count(browser, "svg .arrow.msg.inflight") == 1  # Vote 0->1 is never received
    assert count(browser, "svg .step") == 7
    assert "ElectionSafety" in browser.find_element("css selector", "#verdict").text
    assert "ElectionSafety violated after step 7" in browser.find_element("css selector", "svg .violation").text
    # a click on a step selects its entry in the side pane, which holds its state difference
    browser.find_element("css selector", 'svg .step[data-step="3"] rect').click()
    selected = browser.find_elements("css selector", "#steps li.selected")
    assert [e.get_attribute("data-step") for e in selected] == ["3"]
    assert selected[0].text.startswith("Step 3: receive_vote(msg=Vote(src=0, dst=2")
    assert "voters[2].voted: -1 -> 0" in selected[0].text
    # who became leader in which epoch: voter 0, then voter 1, both in epoch 1 (the double vote)
    assert badge(browser, "voter 0", 4) == "Leader epoch=1 hw=0"
    assert badge(browser, "voter 1", 7) == "Leader epoch=1 hw=0"
    assert badge(browser, "voter 2", 3) == "Voted epoch=1 for 0"  # voter 2 voted for 0, then granted 1 too
    assert "VoteResponse epoch=1 granted" in labels(browser)
    shot = tmp_path / "cex.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000


# ---- a tiny message-passing model: a message lost, one duplicated ------------------------------------------------
@attrs.frozen
class NoBounds:
    pass


def _where(action: str, params: dict[str, Any]) -> Any:
    return {"send": "a", "receive": "b"}.get(action)  # lose and duplicate: the network


pingpong = Model("pingpong", NoBounds, bags=("net",), view=lambda s: {"net": [{"kind": "Ping", "n": n} for n in s]}
                 if isinstance(s, tuple) else s,
                 diagram=Diagram(nodes=lambda v: ["a", "b"], endpoints=lambda m: ("a", "b"), locus=_where))


@pingpong.init
def _init(b: NoBounds) -> Iterator[tuple[int, ...]]:
    yield ()


@pingpong.action(params=("n",))
def send(s: tuple[int, ...], ctx: Context[NoBounds]) -> Iterator[Any]:
    for n in (1, 2):
        yield (n,), tuple(sorted(s + (n,)))


@pingpong.action(params=("n",))
def receive(s: tuple[int, ...], ctx: Context[NoBounds]) -> Iterator[Any]:
    for n in set(s):
        i = s.index(n)
        yield (n,), s[:i] + s[i + 1:]


@pingpong.action(params=("n",))
def lose(s: tuple[int, ...], ctx: Context[NoBounds]) -> Iterator[Any]:
    yield from receive(s, ctx)


@pingpong.action(params=("n",))
def duplicate(s: tuple[int, ...], ctx: Context[NoBounds]) -> Iterator[Any]:
    for n in set(s):
        yield (n,), tuple(sorted(s + (n,)))


def test_lost_and_duplicated_messages_are_visible(browser: Any, tmp_path: Path) -> None:
    steps = [("send", {"n": 1}), ("duplicate", {"n": 1}), ("send", {"n": 2}), ("lose", {"n": 2}),
             ("receive", {"n": 1}), ("receive", {"n": 1})]
    trace = execute(pingpong, pingpong.context(), steps, ())
    assert trace is not None and len(trace) == 6
    d = from_trace(trace, pingpong)
    got = [(a.label, a.start, a.end, a.status, a.dup) for a in d.arrows]
    assert got == [("Ping", 1, 5, "delivered", False), ("Ping", 2, 6, "delivered", True),
                   ("Ping", 3, 4, "lost", False)]
    page = tmp_path / "pingpong.html"
    page.write_text(render_html(d))
    load_page(browser, page)
    assert count(browser, "svg .lifeline") == 2 and count(browser, "svg .arrow.msg") == 3
    assert count(browser, "svg .arrow.lost") == 1 and count(browser, "svg .cross") == 1
    assert count(browser, "svg .arrow.dup") == 1 and "dup Ping" in browser.find_element("css selector", ".dup").text
    assert count(browser, "svg .step.env") == 2  # duplicate and lose happen in the network, across the lifelines
    assert "no violation in this trace" in browser.find_element("css selector", "#verdict").text


def test_a_lasso_loop_is_marked(browser: Any, tmp_path: Path) -> None:
    states = [{"x": 0}, {"x": 1}, {"x": 2}, {"x": 1}]
    steps = [("inc", {}), ("inc", {}), ("dec", {})]
    d = build(states, steps, None, {"model": "loopy", "violation": "EventuallyTwo"}, loop=1)
    page = tmp_path / "loop.html"
    page.write_text(render_html(d))
    load_page(browser, page)
    assert count(browser, "svg .loop") == 1 and count(browser, "svg .stutter") == 0
    assert "loop: back to state 1" in " ".join(
        s.text for s in browser.find_elements("css selector", "svg .loop-label tspan"))
    assert count(browser, "svg .lifeline") == 1  # a model without a diagram: one lifeline
    assert "EventuallyTwo violated: steps 2 to 3 repeat forever" in browser.find_element(
        "css selector", "svg .violation").text


@pytest.mark.parametrize(("model", "variants", "nodes", "calls"), [
    ("controller", ["fenced-leader-kept"], ["controller 0", "controller 1", "metadata log", "broker 0", "broker 1"], 3),
    ("migration", ["no-migration-check"], ["ZooKeeper", "controller 0", "controller 1", "broker 0", "broker 1"], 9),
    # submit, the watch event, process and complete: every step of this trace is a call
    ("reassign", ["complete-early"], ["admin client", "ZooKeeper", "controller 0", "controller 1"], 4),
    ("features", ["stale-apply"], ["ZooKeeper", "broker 0", "broker 1"], 2),  # zk_elect and zk_update write
    ("features", ["register-without-check"],
     ["admin client", "metadata log", "controller 0", "controller 1", "broker 0", "broker 1"], 2),
    ("two-phase", ["eager_commit"], ["TM", "RM 0", "RM 1", "RM 2"], 2),  # Prepared and Commit received
    ("mutex", ["no-turn"], ["process 0", "process 1"], 0),
    ("philosophers", [], ["philosopher 0", "philosopher 1", "philosopher 2"], 0),
])
def test_every_model_declares_its_lifelines(model: str, variants: list[str], nodes: list[str], calls: int) -> None:
    r = check(model, variants)
    assert r.trace is not None
    d = from_trace(r.trace, load(model).model)
    assert d.nodes == nodes
    assert sum(1 for a in d.arrows if a.status == "call") == calls
    assert all(st["locus"] is not None for st in d.steps[1:])  # every step of these traces happens on a node


def test_render_reads_a_trace_file_as_trace_out_draws_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    itf, live, drawn = tmp_path / "cex.json", tmp_path / "live.html", tmp_path / "drawn.html"
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out", str(itf)]) == 12
    assert main(["check", "mutex", "--variant", "no-turn", "--quiet", "--trace-out", str(live)]) == 12
    assert main(["render", str(itf), "--html", str(drawn)]) == 0
    assert drawn.read_text() == live.read_text()
    capsys.readouterr()
    assert main(["render", str(itf), "--html", str(tmp_path / "out.txt")]) == 2
    assert main(["render", str(itf), "--html", str(tmp_path / "no" / "dir.html")]) == 2
    err = capsys.readouterr().err
    assert "ending in .html" in err and "does not exist" in err


# ---- every model's counterexample page, in the browser -------------------------------------------------------------
# (model, variant, extra check arguments, exit code, badges that must be drawn: (node, text it contains), arrows with
# a label that must be drawn (substrings)); each badge and label is what the counterexample is about, named here from
# the variant's description, not read back from the page
PAGES = [
    ("quorum", "double-vote", ["--set", "max_msgs=2", "--set", "loss=false", "--set", "max_dups=0", "--set",
                               "max_restarts=0"], 12,
     [("voter 0", "Leader epoch=1"), ("voter 1", "Leader epoch=1"), ("voter 2", "Voted epoch=1 for 0")],
     ["VoteResponse epoch=1 granted"]),
    ("controller", "fenced-leader-kept", [], 12,
     [("controller 0", "active epoch=1"), ("broker 0", "fenced epoch=-1"), ("metadata log", "hw=")],
     ["BrokerRegistration", "BrokerHeartbeat broker_epoch=0", "-> unfenced"]),
    ("migration", "no-migration-check", [], 12,
     [("controller 0", "leader epoch=1"), ("controller 1", "leader epoch=2"), ("ZooKeeper", "controller_epoch=3")],
     ["claim epoch=2 wrote", "dual_write epoch=1 wrote"]),  # the deposed driver (epoch 1) still writes
    ("reassign", "complete-early", [], 12,
     [("ZooKeeper", "isr=[0, 1]"), ("controller 0", "active epoch_version=1")],
     ["submit new route target=", "NodeChildrenChanged", "complete epoch_version=1 wrote"]),
    ("features", "stale-apply", [], 12,
     [("broker 1", "cache epoch=1"), ("broker 1", "cache epoch=0"), ("broker 0", "controller")],
     ["UpdateFeatures f0 level=0 allow_downgrade wrote /features@v1"]),
    ("features", "register-without-check", [], 12,
     [("metadata log", "f0=3"), ("broker 0", "registered binary=2")], ["BrokerRegistration binary=2 -> registered"]),
    ("two-phase", "eager_commit", [], 12, [("RM 0", "committed"), ("RM 1", "aborted"), ("TM", "done")],
     ["Prepared", "Commit"]),
    ("mutex", "no-turn", [], 12, [("process 0", "critical"), ("process 1", "critical")], []),
    ("philosophers", "", [], 11,
     [("philosopher 0", "holds 1 fork"), ("philosopher 1", "holds 1 fork"), ("philosopher 2", "holds 1 fork")], []),
]


def counterexample_page(tmp_path: Path, model: str, variant: str, extra: list[str], code: int, name: str) -> Path:
    page = tmp_path / name
    args = ["check", model, *(["--variant", variant] if variant else []), *extra, "--quiet", "--trace-out", str(page)]
    assert main(args) == code
    text = page.read_text()
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text  # no network
    return page


def readable_page(browser: Any) -> None:
    """What every page must show: labelled arrows, uncut step labels inside the gutter, no label over another or
    over a badge, the side pane in step order."""
    steps = browser.execute_script("return JSON.parse(document.getElementById('kc-steps').textContent)")
    assert count(browser, "svg .arrow") == count(browser, "svg .arrow .msg-label")
    assert all(text.strip() for text in labels(browser)), labels(browser)
    first_lifeline = min(box(browser, e)["x0"] for e in browser.find_elements("css selector", "svg .lifeline"))
    for st in steps:
        label = browser.find_element("css selector", f'svg .step-label[data-step="{st["index"]}"]')
        shown = "".join(s.text for s in label.find_elements("css selector", "tspan"))
        assert "…" not in shown and shown.replace(" ", "") == st["text"].replace(" ", ""), (shown, st["text"])
        for line in label.find_elements("css selector", "tspan"):  # every line within the gutter, none clipped
            assert box(browser, line)["x1"] < first_lifeline - 60, (line.text, box(browser, line), first_lifeline)
    texts = [box(browser, e) for e in browser.find_elements("css selector", "svg .arrow .msg-label")]
    badges = [box(browser, e) for e in browser.find_elements("css selector", "svg .status rect")]
    for i, a in enumerate(texts):
        assert not any(intersect(a, b) for b in texts[i + 1:] + badges), f"arrow label {labels(browser)[i]!r} covered"
    for i, a in enumerate(badges):
        assert not any(intersect(a, b) for b in badges[i + 1:]), "two badges overlap"
    items = browser.find_elements("css selector", "#steps li")
    assert [int(li.get_attribute("data-step")) for li in items] == list(range(len(steps)))
    assert items[0].text.startswith("State 0 (initial)") and items[1].text.startswith("Step 1: ")


@pytest.mark.parametrize(("model", "variant", "extra", "code", "badges", "arrows"), PAGES,
                         ids=[f"{m}-{v or 'deadlock'}" for m, v, *_ in PAGES])
def test_each_models_counterexample_page(browser: Any, tmp_path: Path, model: str, variant: str, extra: list[str],
                                         code: int, badges: list[tuple[str, str]], arrows: list[str]) -> None:
    page = counterexample_page(tmp_path, model, variant, extra, code, f"{model}.html")
    load_page(browser, page)
    readable_page(browser)
    drawn = {(e.get_attribute("data-node"), " ".join(s.text for s in e.find_elements("css selector", "tspan")))
             for e in browser.find_elements("css selector", "svg .status")}
    for node, text in badges:
        assert any(n == node and text in b for n, b in drawn), (node, text, sorted(drawn))
    assert all(n in {e.get_attribute("data-node") for e in browser.find_elements("css selector", "svg .lifeline")}
               for n, _ in drawn)
    for want in arrows:
        assert any(want in got for got in labels(browser)), (want, labels(browser))
    assert browser.save_screenshot(str(tmp_path / f"{model}.png"))


# liveness counterexamples (exit 13): a loop closed by a step, and a stutter
LASSOS = [
    ("migration", "brokers-check-loops", "loop", 3, "check_quorum(c=0) → back to state 3"),
    ("controller", "heartbeat-stale-offset", "stutter", 8, "(stutter) state 8 repeats forever"),
]


@pytest.mark.parametrize(("model", "variant", "kind", "back", "last_step"), LASSOS, ids=[v for _, v, *_ in LASSOS])
def test_a_lasso_page_draws_its_loop_apart_from_the_verdict(browser: Any, tmp_path: Path, model: str, variant: str,
                                                            kind: str, back: int, last_step: str) -> None:
    page = counterexample_page(tmp_path, model, variant, [], 13, f"{model}.html")
    load_page(browser, page)
    readable_page(browser)
    other = "stutter" if kind == "loop" else "loop"
    assert count(browser, f"svg .{kind} path") == 1 and count(browser, f"svg .{other}") == 0
    loop_label = box(browser, browser.find_element("css selector", f"svg .{kind} .loop-label"))
    verdict = box(browser, browser.find_element("css selector", "svg .violation"))
    assert not intersect(loop_label, verdict), (loop_label, verdict)
    for e in browser.find_elements("css selector", "svg .step-label, svg .status rect, svg .msg-label"):
        assert not intersect(loop_label, box(browser, e)), e.text
    items = browser.find_elements("css selector", "#steps li")
    assert last_step in items[-1].text  # the step closing the loop, or the stutter, is the pane's last entry
    label_text = " ".join(s.text for s in browser.find_elements("css selector", f"svg .{kind} .loop-label tspan"))
    assert f"state {back}" in label_text
    # the loop's rows are marked: every row after state ``back``
    rows = browser.find_elements("css selector", "svg rect.row")
    assert [r.get_attribute("data-step") for r in rows if "in-loop" in r.get_attribute("class")] == [
        str(i) for i in range(back + 1, len(rows))]
    assert browser.save_screenshot(str(tmp_path / f"{model}.png"))


def test_render_draws_a_lasso_file_as_trace_out_does(tmp_path: Path) -> None:
    itf, live, drawn = tmp_path / "cex.json", tmp_path / "live.html", tmp_path / "drawn.html"
    assert main(["check", "migration", "--variant", "brokers-check-loops", "--quiet", "--trace-out", str(itf)]) == 13
    assert main(["check", "migration", "--variant", "brokers-check-loops", "--quiet", "--trace-out", str(live)]) == 13
    assert main(["render", str(itf), "--html", str(drawn)]) == 0
    assert drawn.read_text() == live.read_text() and "→ back to state 3" in drawn.read_text()


def test_step_labels_wrap_without_losing_a_character() -> None:
    from kraftcheck.checker.traces.html_svg import LABEL_CHARS, wrap, wrap_words

    text = ("receive_vote_response(msg=VoteResponse(src=2, dst=1, epoch=1, leader=-1, error=NONE, granted=true, "
            "prevote=false, cur=true))")
    lines = wrap(text)
    assert len(lines) > 1 and all(len(s) <= LABEL_CHARS for s in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert lines[-1].endswith("cur=true))") and not any(s.startswith(",") for s in lines)
    long = "x" * (2 * LABEL_CHARS + 3)
    assert "".join(wrap(long)) == long
    assert wrap_words("leader epoch=1 KRAFT_CONTROLLER_TO_BROKER_COMM", 26) == [
        "leader epoch=1", "KRAFT_CONTROLLER_TO_", "BROKER_COMM"]


def test_a_hook_that_fails_on_a_view_costs_only_its_label() -> None:
    """A derived model's view (or an old trace file's) may lack what a display hook reads: the page still draws,
    with the plain label (the message's kind, the action's name) and no badge."""
    quorum = load("quorum").model
    vote = {"kind": "Vote", "src": 0, "dst": 0}  # no epoch, no log fields: the quorum's label hook fails on it
    states = [{"voters": [{"role": "Leader"}], "net": [vote]}, {"voters": [{}], "net": []}]
    d = build(states, [("receive_vote", {"msg": vote})], quorum, {"model": "quorum"})
    assert [a.label for a in d.arrows] == ["Vote"] and d.status == [{}, {}]
    assert "<svg" in render_html(d)
