"""A test-only operator with ONE input and attributes of its own: ``ScaleShift``, ``y = x * gain + bias``.

Registered from outside the package (``registry.register("tests.fixture_ops.scale_shift")``), with only an
experimental kernel written in C++ (``op_kernel/scale_shift.cpp``) and its oracle in its own folder
(``oracle.py``): ``tests/test_fixture_ops.py`` checks the operator-generic tests pick it up.
"""

from ascend_lab.ops.spec import KernelSpec, OpSpec

from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="scale_shift", op_type="ScaleShift", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    attrs={"gain": op_host.GAIN, "bias": op_host.BIAS},
    kernels={"experimental": KernelSpec(
        flavour="experimental", socs=("ascend910b", "ascend950"), tiling=op_host.tiling,
        tiling_data=op_host.ScaleShiftTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
        tiling_dtype=op_host.tiling_dtype, entry=op_kernel.scale_shift, template=op_kernel.template_args,
        launch=op_kernel.launch, args=("x", "y"), source="tests/fixture_ops/scale_shift/op_kernel/scale_shift.cpp")},
    aclnn=op_api.ACLNN, oracle="tests.fixture_ops.scale_shift.oracle:scale_shift", oracle_attrs=("gain", "bias"),
    summary="y = x * gain + bias",
)
