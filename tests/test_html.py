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
                "--window-size=1400,900"):
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
    # the state difference of a step, on click
    browser.find_element("css selector", 'svg .step[data-step="3"] rect').click()
    details = browser.find_element("css selector", "#details").text
    assert details.startswith("Step 3: receive_vote(msg=Vote(src=0, dst=2") and "voters[2].voted: -1 -> 0" in details
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
    assert count(browser, "svg .loop") == 1
    assert "loop: back to state 1" in browser.find_element("css selector", "svg .loop-label").text
    assert count(browser, "svg .lifeline") == 1  # a model without a diagram: one lifeline


@pytest.mark.parametrize(("model", "variants", "nodes", "calls"), [
    ("controller", ["fenced-leader-kept"], ["controller 0", "controller 1", "metadata log", "broker 0", "broker 1"], 3),
    ("migration", ["no-migration-check"], ["ZooKeeper", "controller 0", "controller 1", "broker 0", "broker 1"], 9),
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
