"""``--junit FILE``: the results as JUnit XML, one test case per (model, variant, property), for CI dashboards.

CI systems (GitHub Actions reporters, GitLab, Jenkins) read JUnit XML and show each failed test case with its
message; a kraftcheck run becomes one ``<testsuite>`` per model and variant, and one ``<testcase>`` per property, so a
dashboard says *which* property broke and shows the counterexample.  No silent ok: a property is a passed case only
when the run checked it; otherwise the case says why not:

- violated: ``<failure type="violation">`` with the counterexample as text (a mutation run that breaks the property
  it expects passes: finding that bug is what the run is for; its counterexample is in ``<system-out>``);
- a reachability target never reached, or a property whose premise was never reached (it held vacuously):
  ``<failure type="unreached">`` / ``<failure type="vacuous">``;
- a mutation that did not break its expected property: ``<failure type="missed">`` on that property;
- a search stopped at a ``--max-states``/``--max-depth`` limit: ``<failure type="limit">`` (nothing is proved);
- properties left unchecked because the search stopped at the first violation or deadlock, and liveness properties
  (no engine checks them yet): ``<skipped>``.

A deadlock check that was on is a case of its own, ``Deadlock``.
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from typing import Any

DEADLOCK_CASE = "Deadlock"


def _case(suite: ET.Element, classname: str, name: str, seconds: float) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": classname, "name": name, "time": f"{seconds:.3f}"})


def _mark(case: ET.Element, tag: str, kind: str, message: str, text: str = "") -> None:
    el = ET.SubElement(case, tag, {"message": message} if tag == "skipped" else {"type": kind, "message": message})
    if text:
        el.text = text


def suite_for(result: Any, spec: Any) -> ET.Element:
    """One ``<testsuite>``: a result of check or simulate against its spec."""
    from kraftcheck.checker.traces.text import render

    variant = f"[{','.join(result.variant)}]" if result.variant else ""
    name = f"{result.model}{variant}"
    classname = f"kraftcheck.{result.model}{variant}"
    suite = ET.Element("testsuite", {"name": name, "timestamp": datetime.now(UTC).isoformat(timespec="seconds"),
                                     "hostname": socket.gethostname(), "time": f"{result.seconds:.3f}"})
    props = ET.SubElement(suite, "properties")
    for key, value in (("engine", result.engine), ("strategy", result.strategy), ("verdict", result.verdict),
                       ("distinct_states", result.distinct_states), ("depth", result.depth),
                       *((f"bound.{k}", v) for k, v in result.bounds.items())):
        ET.SubElement(props, "property", {"name": key, "value": str(value).lower() if isinstance(value, bool)
                                          else str(value)})
    searched = result.manifest.get("searched_verdict", result.verdict)
    stopped = searched in ("violation", "deadlock")  # the search ended at the first finding
    cex = render(result.trace, spec.model) if result.trace is not None else ""
    expected = {e.strip() for e in (result.expected_property or "").split(",") if e.strip()}
    premises = result.manifest.get("premises", {})
    per_case = 0.0  # the search checks every property at once: its time is the suite's, not a case's
    names = [(p.name, p.kind, p.meaning) for p in spec.properties]
    if result.manifest.get("deadlock_check", True):
        names.append((DEADLOCK_CASE, "deadlock", "every reachable state has a successor"))
    for prop, kind, meaning in names:
        case = _case(suite, classname, prop, per_case)
        violated = prop == result.violated_property or (prop == DEADLOCK_CASE and searched == "deadlock")
        if violated and prop in expected:
            ET.SubElement(case, "system-out").text = f"expected violation found: {prop}\n{cex}"
        elif violated:
            steps = f" after {len(result.trace)} steps" if result.trace is not None else ""
            what = "deadlock" if prop == DEADLOCK_CASE else f"{prop} violated"
            _mark(case, "failure", "violation" if kind != "deadlock" else "deadlock", f"{what}{steps}: {meaning}", cex)
        elif prop in expected and result.verdict == "missed":
            found = f"; it found {result.violated_property} instead" if result.violated_property else ""
            _mark(case, "failure", "missed", f"mutation {','.join(result.variant)} should break {prop}, but the run "
                  f"did not{found} (exit 17)", cex)
        elif kind == "liveness":
            _mark(case, "skipped", "", "liveness properties are not checked yet")
        elif stopped:
            first = result.violated_property or "a deadlock"
            _mark(case, "skipped", "", f"not checked to the end: the search stopped at the first finding ({first})")
        elif prop in result.unreached_targets:
            _mark(case, "failure", "unreached", f"{prop} was never reached: the check may be vacuous ({meaning})")
        elif prop in result.vacuous_properties:
            _mark(case, "failure", "vacuous", f"{prop} holds vacuously: its premise ({premises.get(prop, '')}) was "
                  "never reached; raise the bounds (e.g. --profile deep)")
        elif result.verdict == "limit":
            _mark(case, "failure", "limit", "the search stopped at a --max-states/--max-depth limit before it was "
                  "complete: nothing is proved")
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", "0")
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    return suite


def junit_xml(results: list[Any], specs: list[Any]) -> str:
    """The whole run as a JUnit XML document (``<testsuites>`` with one suite per result)."""
    root = ET.Element("testsuites", {"name": "kraftcheck"})
    suites = [suite_for(r, s) for r, s in zip(results, specs)]
    root.extend(suites)
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    root.set("time", f"{sum(r.seconds for r in results):.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
