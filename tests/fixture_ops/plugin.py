"""A pytest plugin that registers the two C++ fixture operators before collection:
``pytest -p tests.fixture_ops.plugin tests/test_every_op.py`` runs the operator-generic tests on them too
(``tests/test_fixture_ops.py`` does exactly that)."""

from ascend_lab.ops import registry

#: The fixture operators, one input (ScaleShift) and three (DiffScaleAdd), each with attributes of its own.
FIXTURE_OPS = ("tests.fixture_ops.scale_shift", "tests.fixture_ops.diff_scale_add")


def pytest_configure(config: object) -> None:
    for name in FIXTURE_OPS:
        registry.register(name)
