"""The plain test runner of the infra checks: runs every `test_*` function of a module,
reports each, keeps going after a failure, and closes with `N passed, M failed`."""

import os
import time


class Shared:
    """One expensive fixture (a server, a harness) made by `make` on first use and
    closed (its `close()`) by `teardown`, after the last test."""

    def __init__(self, make):
        self.make = make
        self.value = None

    def get(self):
        if self.value is None:
            self.value = self.make()
        return self.value

    def teardown(self, module=None):
        if self.value is not None:
            self.value.close()
            self.value = None


def run_tests(namespace: dict, teardown=None) -> int:
    """Run the `test_*` callables of `namespace` (a module's globals()) whose names
    contain $TEST_FILTER (default: all); 1 if any failed."""
    only = os.environ.get("TEST_FILTER", "")
    tests = [(n, f) for n, f in list(namespace.items()) if n.startswith("test_") and callable(f) and only in n]
    failed = 0
    try:
        for name, fn in tests:
            started = time.monotonic()
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - report every failure, keep going
                failed += 1
                print(f"FAIL {name}: {type(exc).__name__}: {exc}")
            else:
                print(f"ok   {name} ({time.monotonic() - started:.1f} s)")
    finally:
        if teardown is not None:
            teardown()
    print(f"{len(tests) - failed} passed, {failed} failed")
    return 1 if failed else 0
