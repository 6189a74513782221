"""HardSigmoidGrad (aclnnHardsigmoidBackward): op_api, op_host and op_kernel."""
