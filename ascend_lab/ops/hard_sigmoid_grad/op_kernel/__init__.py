"""HardSigmoidGrad kernels, one module per flavour (design §8); the AscendC ones are C++ in a folder of their own.

* ``experimental`` -- ``experimental/`` (ops-nn ``experimental/activation/hard_sigmoid_grad/op_kernel/``): the kernel
  the seed articles describe, built only as a custom package, registered for ascend950.
* ``main`` -- ``main/`` (ops-nn ``activation/hard_sigmoid_grad/op_kernel/``): the built-in kernel a stock CANN runs on
  ascend950 (fp16/bf16 computed in fp32 with alpha 1/6f, rounded back once); import it as ``op_kernel.main``.
* ``tbe`` -- the legacy TBE kernel, in the TBE DSL model.

The package's own names are the experimental kernel's (``op_kernel.hard_sigmoid_grad`` is its entry).
"""

from .experimental import BUFFER_NUM, SOURCE_DIR, hard_sigmoid_grad, launch, template_args

__all__ = ["BUFFER_NUM", "SOURCE_DIR", "hard_sigmoid_grad", "launch", "template_args"]
