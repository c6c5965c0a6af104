"""The public entry points' docstring examples run as written (``pairaudit.scan``, ``Audit``, ``Review``):
a contributor who changes a behaviour sees its example fail."""

from __future__ import annotations

import doctest

import pytest

import pairaudit.api
import pairaudit.audit
import pairaudit.review


@pytest.mark.parametrize("obj", [pairaudit.api.scan, pairaudit.audit.Audit, pairaudit.review.Review],
                         ids=lambda o: o.__qualname__)
def test_the_docstring_example_runs(obj: object) -> None:
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, name=obj.__qualname__, globs={})
    assert tests and tests[0].examples, "no example in the docstring"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test)
    assert runner.failures == 0, f"{runner.failures} example(s) of {obj.__qualname__} failed (run with -s to see them)"
