"""DiffScaleAdd's one kernel, flavour ``experimental``: C++ in ``diff_scale_add.cpp``, through the C++ front end."""

from pathlib import Path

from ascend_lab.ascendc.cxx import KernelFile

from ...kernels import launcher, template_args

__all__ = ["diff_scale_add", "launch", "template_args"]

#: The ``__global__`` entry, compiled per dtype on first launch; ``bufferNum`` overrides BUFFER_NUM.
diff_scale_add = KernelFile(Path(__file__).with_name("diff_scale_add.cpp"), entry="diff_scale_add",
                            knobs={"bufferNum": "BUFFER_NUM"}, dtype_macros={"dtype": "DTYPE_X"})
launch = launcher(diff_scale_add, "DiffScaleAdd", ("x", "y", "z", "out"))
