"""Operators, one package each, laid out like CANN: op_api (aclnn L2 + L0), op_host, op_kernel."""
