"""``ascend_lab.base`` — the bottom layer every other layer may use: the SoC catalogue
(``platform``: what CANN's ``PlatformAscendC`` / ``GetCurrentPlatformInfo`` report) and the operator
log (``log``: ``OP_LOGE`` / ``OP_LOGI``). It imports nothing else from the package."""
