"""The chapter 7 tiling explorer opens at the BUFFER_NUM the kernel uses, read from the kernel (issue 12 item 7)."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from ascend_lab.book import widgets_of
from ascend_lab.explore import kernel_buffer_num
from ascend_lab.ops.hard_sigmoid_grad.op_kernel import experimental
from ascend_lab.viz import tiling_explorer


def test_kernel_buffer_num_is_the_kernels_constant(monkeypatch):
    assert kernel_buffer_num("hard_sigmoid_grad", "experimental") == experimental.BUFFER_NUM
    # read, not typed: a kernel whose template defaults to 3 opens at 3
    monkeypatch.setattr(experimental.template_args, "__defaults__", (3,))
    assert kernel_buffer_num("hard_sigmoid_grad", "experimental") == 3


@pytest.mark.parametrize("buffer_nums", [(1, 2, 3), (2, 4), (1, 3)])
def test_static_explorer_opens_at_the_kernels_buffer_num(buffer_nums):
    box = tiling_explorer(static=True, op="hard_sigmoid_grad", dtype="float16", soc="Ascend950PR",
                          ns=(65, 100_000), buffer_nums=buffer_nums, kernel="experimental")
    slider, body = box.children[1], box.children[2]
    want = buffer_nums.index(experimental.BUFFER_NUM) if experimental.BUFFER_NUM in buffer_nums else 0
    assert slider.value == want and slider.options[slider.index][0] == str(buffer_nums[want])
    assert [stack.selected_index for stack in body.children] == [want] * 2
    assert len(widgets_of(box, widgets.Image)) == 2 * len(buffer_nums)
