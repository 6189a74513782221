"""A test-only elementwise operator, ``MulGrad``: ``out = grad * x``, float32 and float16.

It proves the registry's promise: this folder plus one ``registry.register("tests.fixture_ops.mul_grad")``
line make the op appear in ``ascend-lab tiling``, ``ascend-lab run``, the tiling explorer and a tile map.
"""

from ascend_lab.ops.spec import KernelSpec, OpSpec

from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="mul_grad", op_type="MulGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    n_name="total_length",
    kernels={"experimental": KernelSpec(
        flavour="experimental", socs=("ascend910b", "ascend950"), tiling=op_host.tiling,
        tiling_data=op_host.MulGradTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
        entry=op_kernel.mul_grad, template=op_kernel.template_args, launch=op_kernel.launch,
        args=("gradOutput", "self", "gradInput"), source="tests/fixture_ops/mul_grad/op_kernel.py")},
    aclnn=op_api.ACLNN, oracle="tests.fixture_ops.mul_grad.golden:mul_grad", summary="out = grad * x",
)
