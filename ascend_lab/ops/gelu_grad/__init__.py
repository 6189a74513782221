"""GeluGrad, a gallery operator written for the book (chapter "A family of kernels"): ``dx = dy * (cdf(x) +
x pdf(x))`` -- the exact (erf) GELU's derivative, ``cdf(x) = (1 + erf(x / sqrt 2)) / 2``, ``pdf(x) = e^(-x^2 / 2) /
sqrt(2 pi)`` -- reached from ``aclnnGeluBackward``.

One folder: the spec below, ``op_api`` (the aclnn API and its checks), ``op_host`` (numpy-free tiling),
``op_kernel`` (the C++ kernel in ``op_kernel/experimental/`` and its launcher) and ``oracle`` (numpy + ml_dtypes).
"""

from ..spec import KernelSpec, OpSpec
from . import op_api, op_host, op_kernel

SPEC = OpSpec(
    key="gelu_grad", op_type="GeluGrad", op_def=op_host.OP_DEF, infer_shape=op_host.infer_shape,
    kernels={"experimental": KernelSpec(
        flavour="experimental", socs=("ascend910b",), tiling=op_host.tiling,
        tiling_data=op_host.GeluGradTilingData, core_ranges=op_host.core_ranges, tile_field="ubFactor",
        tiling_dtype=op_host.tiling_dtype, entry=op_kernel.gelu_grad, template=op_kernel.template_args,
        launch=op_kernel.launch, args=op_kernel.ARGS, buffer_num=op_host.BUFFER_NUM,
        source="ascend_lab/ops/gelu_grad/op_kernel/experimental/gelu_grad.h")},
    aclnn=op_api.ACLNN, oracle="ascend_lab.ops.gelu_grad.oracle:gelu_grad",
    summary="dx = dy * (cdf(x) + x pdf(x)) (exact GELU, erf form)",
)
