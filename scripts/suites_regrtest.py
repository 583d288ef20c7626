#!/usr/bin/env python3
"""Reads the results of one CPython regression-test run (the regrtest log and its --junit-xml
file) and, given a second run, compares them: used by scripts/suites.sh to hold a run under a
Strata malloc library against the same run under the C library's malloc.

  suites_regrtest.py LOG XML                  prints what ran: "N modules, T tests (...)"
  suites_regrtest.py LOG XML BASE_LOG BASE_XML
      prints what ran, then exits 1 and lists on stderr every module whose outcome
      (passed, failed, skipped, crashed...) or test case whose outcome (ok, failure, error,
      skipped) differs from the base run; exits 0 when the runs agree.

Module outcomes come from the log's progress lines ("[ 3/20] test_dict passed"), since a module
whose worker crashed leaves nothing in the XML; test-case outcomes come from the XML."""
import re
import sys
import xml.etree.ElementTree as ET

PROGRESS = re.compile(r"\[\s*\d+/\d+(?:/\d+)?\] (test_\w+) (\w+)")


def modules(log_path):
    """Module name -> first word of its outcome, from the progress lines of the log."""
    outcome = {}
    with open(log_path, errors="replace") as log:
        for line in log:
            m = PROGRESS.search(line)
            if m:
                outcome[m.group(1)] = m.group(2)
    return outcome


def cases(xml_path):
    """Test-case name -> ok, failure, error or skipped, from the junit XML (empty if absent)."""
    outcome = {}
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError):
        return outcome
    for case in root.iter("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcome[case.get("name")] = kinds[0] if kinds else "ok"
    return outcome


def describe(mods, tests):
    def count(table, value):
        return sum(1 for v in table.values() if v == value)
    bad_mods = len(mods) - count(mods, "passed") - count(mods, "skipped")
    bad_tests = count(tests, "failure") + count(tests, "error")
    return (f"{len(mods)} modules ({bad_mods} not passed), {len(tests)} tests "
            f"({bad_tests} failed, {count(tests, 'skipped')} skipped)")


def differences(name, mine, base):
    found = []
    for key in sorted(set(mine) | set(base)):
        a, b = mine.get(key, "absent"), base.get(key, "absent")
        if a != b:
            found.append(f"{name} {key}: {a} (glibc: {b})")
    return found


def main(argv):
    if len(argv) not in (3, 5):
        sys.stderr.write(__doc__)
        return 2
    mods, tests = modules(argv[1]), cases(argv[2])
    if not mods:
        print(f"no module ran (see {argv[1]})")
        return 1
    print(describe(mods, tests))
    if len(argv) == 3:
        return 0
    found = (differences("module", mods, modules(argv[3]))
             + differences("test", tests, cases(argv[4])))
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
