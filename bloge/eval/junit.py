"""Results as JUnit XML, which CI systems show: one test case per dataset case, a failure
per case that did not pass, naming each failed check."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from bloge.eval.results import EvalResults


def junit_xml(results: EvalResults) -> str:
    suite = ET.Element("testsuite", {
        "name": f"bloge eval {results.dataset}", "tests": str(len(results.cases)),
        "failures": str(sum(not c.passed for c in results.cases)), "errors": "0",
        "time": f"{results.seconds:.3f}"})
    for case in results.cases:
        element = ET.SubElement(suite, "testcase", {
            "classname": f"{results.dataset}.{results.agent}", "name": case.name,
            "time": f"{sum(r.seconds for r in case.runs):.3f}"})
        if case.passed:
            continue
        lines: list[str] = []
        for index, run in enumerate(case.runs):
            if not run.passed:
                prefix = f"run {index + 1}: " if len(case.runs) > 1 else ""
                lines.extend(prefix + failure for failure in run.failures)
        failure = ET.SubElement(element, "failure", {
            "message": lines[0] if lines else "failed",
            "type": "EvalFailure"})
        failure.text = "\n".join(lines)
    suites = ET.Element("testsuites")
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)
