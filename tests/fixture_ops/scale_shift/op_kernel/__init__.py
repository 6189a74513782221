"""ScaleShift's one kernel, flavour ``experimental``: C++ in ``scale_shift.cpp``, through the C++ front end."""

from pathlib import Path

from ascend_lab.ascendc.cxx import KernelFile

from ...kernels import launcher, template_args

__all__ = ["launch", "scale_shift", "template_args"]

#: The ``__global__`` entry, compiled per dtype on first launch; ``bufferNum`` overrides BUFFER_NUM.
scale_shift = KernelFile(Path(__file__).with_name("scale_shift.cpp"), entry="scale_shift",
                         knobs={"bufferNum": "BUFFER_NUM"}, dtype_macros={"dtype": "DTYPE_X"})
launch = launcher(scale_shift, "ScaleShift", ("x", "y"))
