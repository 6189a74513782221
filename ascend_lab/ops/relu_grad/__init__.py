"""ReluGrad (aclnnThresholdBackward with threshold == 0): op_api, op_host and op_kernel."""
