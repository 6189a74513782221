// ascend_lab -- HardSigmoidGrad template tiling key (experimental arch35 kernel).
//
// One template parameter, schMode, picks the kernel instantiation by dtype. The host's tiling key is the
// index of the value in the UINT list, which here equals the value: 0 fp32, 1 fp16, 2 bf16
// (op_host.SCH_MODE). The real header also includes "ascendc/host_api/tiling/template_argument.h" for
// the host build; in ascend_lab the simulator provides the ASCENDC_TPL_* macros, so no include is needed.

#ifndef ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_TILING_KEY_H
#define ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_TILING_KEY_H

#define HARD_SIGMOID_GRAD_MODE_FLOAT32 0   // HardSigmoidGrad<float>: computes in fp32
#define HARD_SIGMOID_GRAD_MODE_FLOAT16 1   // HardSigmoidGrad<half>: computes in fp16, with half(alpha)
#define HARD_SIGMOID_GRAD_MODE_BFLOAT16 2  // HardSigmoidGradBf16: casts to fp32, computes, casts back

ASCENDC_TPL_ARGS_DECL(HardSigmoidGrad,
                      ASCENDC_TPL_UINT_DECL(schMode, 8, ASCENDC_TPL_UI_LIST, HARD_SIGMOID_GRAD_MODE_FLOAT32,
                                            HARD_SIGMOID_GRAD_MODE_FLOAT16, HARD_SIGMOID_GRAD_MODE_BFLOAT16));

ASCENDC_TPL_SEL(ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_UINT_SEL(schMode, ASCENDC_TPL_UI_LIST, HARD_SIGMOID_GRAD_MODE_FLOAT32,
                                                          HARD_SIGMOID_GRAD_MODE_FLOAT16,
                                                          HARD_SIGMOID_GRAD_MODE_BFLOAT16)), );

#endif  // ASCEND_LAB_EXP_HARD_SIGMOID_GRAD_TILING_KEY_H
