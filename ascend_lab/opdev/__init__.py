"""``ascend_lab.opdev`` — what CANN's opbase gives an operator author: status codes, the op log,
dtype utilities (PromoteType/CanCast), the platform catalogue, the executor that records the L0 graph,
and the shared L0 ops (Contiguous, Cast, ViewCopy, BroadcastTo)."""
