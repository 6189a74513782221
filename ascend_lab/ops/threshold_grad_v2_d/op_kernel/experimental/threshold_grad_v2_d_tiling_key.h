// ascend_lab -- ThresholdGradV2D template tiling key (experimental kernel).
//
// The entry is a template on schMode, declared here with the values {0, 1}; the host's tiling always sets
// key 0 (GET_TPL_TILING_KEY(0)) and the kernel does not branch on it: the dtype comes from
// DTYPE_INPUT_GRADIENT. The real header also includes "ascendc/host_api/tiling/template_argument.h" for the
// host build; in ascend_lab the simulator provides the ASCENDC_TPL_* macros, so no include is needed.

#ifndef ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_TILING_KEY_H
#define ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_TILING_KEY_H

#define ELEMENTWISE_TPL_SCH_MODE_0 0
#define ELEMENTWISE_TPL_SCH_MODE_1 1

ASCENDC_TPL_ARGS_DECL(ThresholdGradV2D, ASCENDC_TPL_UINT_DECL(schMode, 1, ASCENDC_TPL_UI_LIST,
                                                              ELEMENTWISE_TPL_SCH_MODE_0, ELEMENTWISE_TPL_SCH_MODE_1));

ASCENDC_TPL_SEL(ASCENDC_TPL_ARGS_SEL(ASCENDC_TPL_UINT_SEL(schMode, ASCENDC_TPL_UI_LIST, ELEMENTWISE_TPL_SCH_MODE_0,
                                                          ELEMENTWISE_TPL_SCH_MODE_1)));

#endif  // ASCEND_LAB_EXP_THRESHOLD_GRAD_V2_D_TILING_KEY_H
