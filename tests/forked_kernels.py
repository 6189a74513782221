"""nbval's notebook kernels, forked from one process that has already imported what the notebooks import (issue 19).

A kernel spends most of its CPU starting: Python, ipykernel, numpy and matplotlib are imported afresh for each of
the book's notebooks (~1 CPU s of the ~1.9 a notebook's kernel uses). Here one *zygote* process per pytest process
imports them once, and each notebook gets a ``fork`` of it that starts the kernel exactly as
``python -m ipykernel_launcher -f CONNECTION_FILE`` does: in the notebook's folder, with the environment, the
standard streams and the arguments jupyter_client gave the launch, in a session of its own. The notebook then runs
every cell as before; its ``import`` lines find those libraries loaded. conftest.py starts the zygote and points
nbval's kernel at it. ``make test``'s nbval stage alone, usual kernels then forked ones, alternating: 88 -> 82 and
98 -> 77 CPU s, 53 -> 52 and 58 -> 47 s.

Two commands::

    python forked_kernels.py serve SOCKET            the zygote
    python forked_kernels.py kernel SOCKET ARGS...   the kernel process jupyter_client launches (ARGS: ``-f FILE``):
                                                     it asks the zygote for a fork and stands in for it -- signals
                                                     are passed on, and it exits when the fork exits

What stays as it was: the imports must be silent -- a warning or a line they print would have shown in a notebook's
first cell -- or the zygote does not serve. When it does not (or cannot be reached), the kernel command becomes the
usual ``python -m ipykernel_launcher``, so a notebook always runs; with ``ASCEND_LAB_FORKED_KERNELS=0``, conftest.py
starts every kernel the usual way. What differs: the fork's garbage collector leaves the imported modules alone
(frozen before the fork, so that every fork shares their memory), and its parent is the zygote, not the pytest
process: the kernel ends when the zygote ends (ipykernel watches its parent), and the zygote ends a kernel whose
stand-in has gone. tests/test_forked_kernels.py compares what a notebook can see of the two kernels.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import os
import select
import signal
import socket
import sys
import warnings

#: The libraries every notebook's kernel imports first: ipykernel's kernel (with IPython, zmq, tornado and
#: jupyter_client; not ipykernel.kernelapp, which reads JPY_PARENT_PID when imported), numpy, ml_dtypes, and the parts
#: of matplotlib the package's figures use: ~0.75 of the ~0.9 CPU s the imports of a notebook's first cell take. Not
#: the package: ``import ascend_lab`` registers the %%ascendc magic and the figures' alt-text printer with the IPython
#: shell it runs in, so the notebook imports it, in its kernel, as always (0.14 CPU s). None of these acts on a shell.
PREIMPORTED = ("ipykernel.ipkernel", "numpy", "ml_dtypes", "matplotlib", "matplotlib.figure", "matplotlib.animation",
               "matplotlib.backends.backend_agg")
#: IPKernelApp selects matplotlib's inline backend through this variable before any notebook imports matplotlib
#: (ipykernel/kernelapp.py, init_gui_pylab); matplotlib reads it when imported, so the zygote sets it first.
INLINE = "module://matplotlib_inline.backend_inline"


def _import_silently() -> str:
    """Import PREIMPORTED; "" if that printed and warned nothing, else what it said."""
    os.environ.setdefault("MPLBACKEND", INLINE)
    out = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(out):
        warnings.simplefilter("always")
        for name in PREIMPORTED:
            __import__(name)
    return out.getvalue() + "".join(f"{w.category.__name__}: {w.message}\n" for w in caught)


def serve(path: str) -> None:
    """The zygote: import, then fork a kernel for each request on the socket at ``path`` until told to stop (SIGTERM)
    or its parent (the pytest process) is gone. A kernel whose stand-in has gone is ended, and all of them at the end.
    """
    del sys.path[0]              # this file's folder: a kernel's path is what `python -m ipykernel_launcher` leaves
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)          # at once: a kernel launched while the zygote imports waits in the queue
    listener.listen(64)
    said = _import_silently()
    if said:
        sys.stderr.write(f"forked_kernels: not serving, the imports said:\n{said}")
        return                   # the queued kernels read an empty reply and start the usual way
    gc.collect()
    gc.freeze()                  # the imported modules stay shared with every fork (see the docstring)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    parent = os.pidfd_open(os.getppid())
    kernels: dict[int, tuple[int, int]] = {}           # a fork's pidfd -> (its pid, its stand-in's pidfd)
    try:
        while True:
            stand_ins = {proxy: fd for fd, (_, proxy) in kernels.items()}
            ready, _, _ = select.select([listener, parent, *kernels, *stand_ins], [], [])
            if parent in ready:
                return
            for fd in ready:
                if fd is listener:
                    fork = _fork_kernel(listener, [parent, *kernels, *stand_ins])
                    if fork:
                        kernels[fork[0]] = fork[1:]
                elif fd in kernels or fd in stand_ins:
                    own = fd if fd in kernels else stand_ins[fd]
                    if own in kernels:
                        _end(own, *kernels.pop(own))
    finally:
        for fd, (pid, proxy) in kernels.items():
            _end(fd, pid, proxy)


def _end(fd: int, pid: int, proxy: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)     # a no-op for a kernel that has exited
    os.waitpid(pid, 0)
    os.close(fd)
    os.close(proxy)


def _fork_kernel(listener: socket.socket, inherited: list[int]) -> tuple[int, int, int] | None:
    """Accept one request and fork its kernel; (its pidfd, pid, the stand-in's pidfd), or None."""
    conn, _ = listener.accept()
    with conn:
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        request = json.loads(data)
        pid = os.fork()
        if pid == 0:
            _become_kernel(request, fds, [listener.fileno(), conn.fileno(), *inherited])
        for fd in fds:
            os.close(fd)
        try:
            proxy = os.pidfd_open(request["proxy"])
        except ProcessLookupError:       # the stand-in has gone already
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        conn.send(str(pid).encode())
    return os.pidfd_open(pid), pid, proxy


def _become_kernel(request: dict, fds: list[int], inherited: list[int]) -> None:
    """In the fork: become what ``python -m ipykernel_launcher ARGS`` started by jupyter_client would be."""
    code = 1
    try:
        for fd in inherited:
            os.close(fd)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setsid()
        for target, fd in enumerate(fds):        # the stand-in's stdin, stdout and stderr
            os.dup2(fd, target)
            os.close(fd)
        if "numpy.random" in sys.modules:        # its global generator, seeded in the zygote (Python's random
            sys.modules["numpy.random"].seed()   # module reseeds itself in a fork)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ["JPY_PARENT_PID"] = str(os.getppid())   # ipykernel ends the kernel when this parent ends
        import ipykernel_launcher
        sys.argv = [ipykernel_launcher.__file__, *request["args"]]
        from ipykernel import kernelapp  # (it reads JPY_PARENT_PID when imported: here, not in the zygote)
        kernelapp.launch_new_instance()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def kernel(path: str, args: list[str]) -> None:
    """The kernel process jupyter_client launches: a fork from the zygote at ``path``, or the usual kernel."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
            conn.connect(path)
            request = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ), "proxy": os.getpid()}
            socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
            pid = int(conn.recv(64))
    except (OSError, ValueError):                # no zygote, or one that does not serve
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *args])

    def pass_on(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, pass_on)
    fork = os.pidfd_open(pid)
    select.select([fork], [], [])                # until the kernel exits (a signal's handler runs in between)


if __name__ == "__main__":
    command, socket_path, *rest = sys.argv[1:]
    if command == "serve":
        serve(socket_path)
    else:
        kernel(socket_path, rest)
