"""The fixture of the end-to-end scenarios: one stack (a moto server, the router and the
real function binaries under `cargo lambda watch`, tests/e2e/stack.py) for the whole
session, reset before each scenario."""

import time

import pytest
from stack import E2E


@pytest.fixture(scope="session")
def e2e_stack():
    started = time.monotonic()
    stack = E2E()
    try:
        yield stack
    finally:
        stack.close()
        print(f"\ne2e: {time.monotonic() - started:.0f} s in all")


@pytest.fixture
def e(e2e_stack: E2E) -> E2E:
    """The stack, with the faults, throttles and alerts of earlier scenarios cleared."""
    e2e_stack.reset()
    return e2e_stack
