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
- a liveness property passes when the run judged that it holds, and fails (``<failure type="liveness">``, the
  lasso in the text) when it found a fair lasso; one the run did not judge (``--no-liveness``, a simulation, the
  Spark engine, a safety search that did not finish, the first liveness failure ending the check) is
  ``<skipped>`` with the reason;
- properties left unchecked because the search stopped at the first violation or deadlock: ``<skipped>``.

Suites are named ``model``, ``model[variant]`` when a variant is on, and with ``[profile]`` added when the profile is
not the default or the run checked the same model at several profiles (the main job: ``quorum[default]``,
``quorum[duplication]``, ``quorum[faults]``), so that every suite's cases have names of their own.

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


def suite_name(result: Any, several_profiles: bool = False) -> str:
    """``model``, ``model[variant]``, then ``[profile]`` when it is not the default or the run had several."""
    name = result.model + (f"[{','.join(result.variant)}]" if result.variant else "")
    profile = result.manifest.get("profile", "default")
    if several_profiles or profile != "default":
        name += f"[{profile}]"
    return name


def suite_for(result: Any, spec: Any, several_profiles: bool = False) -> ET.Element:
    """One ``<testsuite>``: a result of check or simulate against its spec (``several_profiles``: the same model
    and variant were checked at other profiles in this run, so the suite's name carries its profile)."""
    from kraftcheck.checker.cli.notes import finished, raise_bounds_advice
    from kraftcheck.checker.traces.text import render

    name = suite_name(result, several_profiles)
    classname = f"kraftcheck.{name}"
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
    liveness = result.manifest.get("liveness", {})
    per_case = 0.0  # the search checks every property at once: its time is the suite's, not a case's
    undecided = result.manifest.get("undecided_by_cut") or {}  # commands.combine_profiles
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
            if kind == "liveness":
                steps = f" (a fair lasso of {len(result.trace)} steps)" if result.trace is not None else ""
            failure = kind if kind in ("deadlock", "liveness") else "violation"
            _mark(case, "failure", failure, f"{what}{steps}: {meaning}", cex)
        elif prop in expected and result.verdict == "missed":
            found = f"; it found {result.violated_property} instead" if result.violated_property else ""
            _mark(case, "failure", "missed", f"mutation {','.join(result.variant)} should break {prop}, but the run "
                  f"did not{found} (exit 17)", cex)
        elif kind == "liveness":
            status = str(liveness.get("properties", {}).get(prop) or f"not checked by this run ({result.engine})")
            if not status.startswith("holds"):
                why = liveness.get("why_not_checked")
                if status == "not checked" and result.violated_property and searched == "liveness":
                    why = f"the check stopped at the first liveness failure ({result.violated_property})"
                _mark(case, "skipped", "", status + (f": {why}" if why else ""))
        elif stopped:
            first = result.violated_property or "a deadlock"
            _mark(case, "skipped", "", f"not checked to the end: the search stopped at the first finding ({first})")
        elif result.verdict == "limit" and (prop in undecided.get("names", ()) or prop in result.unreached_targets):
            # not reached before a limit: this run's own, or (undecided_by_cut) that of the model's other runs
            who = f"here, and {', '.join(undecided['cut'])} stopped" if prop in undecided.get("names", ()) else (
                "before the search stopped")
            _mark(case, "failure", "limit", f"{prop} was not reached {who} at a --max-states/--max-depth limit: "
                  "nothing is decided")
        elif prop in result.unreached_targets:
            _mark(case, "failure", "unreached", f"{prop} was never reached: the check may be vacuous ({meaning})")
        elif prop in result.vacuous_properties and finished(result):
            _mark(case, "failure", "vacuous", f"{prop} holds vacuously: its premise ({premises.get(prop, '')}) was "
                  f"never reached; {raise_bounds_advice(result, spec)}")
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
    runs: dict[tuple[str, tuple[str, ...]], int] = {}
    for r in results:
        runs[(r.model, tuple(r.variant))] = runs.get((r.model, tuple(r.variant)), 0) + 1
    suites = [suite_for(r, s, runs[(r.model, tuple(r.variant))] > 1) for r, s in zip(results, specs)]
    root.extend(suites)
    for attr in ("tests", "failures", "errors", "skipped"):
        root.set(attr, str(sum(int(s.get(attr, "0")) for s in suites)))
    root.set("time", f"{sum(r.seconds for r in results):.3f}")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
