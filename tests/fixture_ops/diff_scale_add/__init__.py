"""A test-only operator with THREE inputs and an attribute of its own: ``DiffScaleAdd``,
``out = (x - y) * scale + z``.

Registered from outside the package (``registry.register("tests.fixture_ops.diff_scale_add")``), with only an
experimental kernel written in C++ (``op_kernel/diff_scale_add.cpp``) and its oracle in its own folder
(``oracle.py``): ``tests/test_fixture_ops.py`` checks the operator-generic tests pick it up.
"""

from ascend_lab.ops.spec import KernelSpec, OpSpec

from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="diff_scale_add", op_type="DiffScaleAdd", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    attrs={"scale": op_host.SCALE},
    kernels={"experimental": KernelSpec(
        flavour="experimental", socs=("ascend910b", "ascend950"), tiling=op_host.tiling,
        tiling_data=op_host.DiffScaleAddTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
        tiling_dtype=op_host.tiling_dtype, entry=op_kernel.diff_scale_add, template=op_kernel.template_args,
        launch=op_kernel.launch, args=("x", "y", "z", "out"),
        source="tests/fixture_ops/diff_scale_add/op_kernel/diff_scale_add.cpp")},
    aclnn=op_api.ACLNN, oracle="tests.fixture_ops.diff_scale_add.oracle:diff_scale_add", oracle_attrs=("scale",),
    summary="out = (x - y) * scale + z",
)
