"""``ascend_lab.aclnn`` — the aclnn L2 APIs, named as in ``aclnnop/*.h``.

Each operator has two phases: ``<Op>GetWorkspaceSize(...)`` checks the arguments and builds the L0
graph, returning ``(status, workspace_size, executor)``; ``<Op>(workspace, workspace_size, executor,
stream)`` runs it and returns a status. The functions come from the operator registry: every registered
op package that owns an aclnn API contributes its two phases here under their C names.

Threads: the APIs act on the ACL runtime and the SoC in force of the calling thread's simulation context
(``base.context``; ``acl.runtime`` says what is process-wide). Distinct executors may run in distinct threads;
one executor is run once, by one thread. Phase 1 is re-entrant except where CANN's own is not:
``aclnnThresholdBackwardGetWorkspaceSize`` keeps the threshold in a file-scope global, so two threads in it at
once may pick each other's dtype list -- serialise it (the convenience layer, ``ascend_lab.run``, does).
"""

from .opdev.aclnn_common import OUT
from .opdev.errno import AclnnStatus, describe
from .ops import registry

_APIS = {}
for _spec, _api in registry.aclnn_apis():
    _APIS[_api.get_workspace_size.__name__] = _api.get_workspace_size
    _APIS[_api.run.__name__] = _api.run
globals().update(_APIS)

__all__ = [*_APIS, "OUT", "AclnnStatus", "describe"]
