"""The compile worker: LLVM IR text -> optimised ELF object (or shared object) in a process of its own, which jit.py
kills when a module passes its deadline (LLVM's C++ cannot be interrupted inside a process: no signal or exception
reaches it). It also answers what LLVM calls this machine, so that a process loading shared objects
(runtime/loader.py) never maps LLVM itself.

    worker = Worker()                                    # started now, ready at its first request
    obj, optimized_ir = worker.compile(text, triple, cpu, features, opt=3, timeout=30.0, shared=True)
    facts = worker.host()                                # {"triple", "cpu", "features", "llvm"}
    # raises TimeoutError (the worker is killed), WorkerLost (it died), NoWorker (it could not start)
    # or CompileError (LLVM's own error)

The same pipeline runs in-process where no deadline is wanted (`compile_object`, `optimize`): the pass builder's
O`opt` pipeline, loop and SLP vectorisers, interleaving and unrolling from O2, then the TargetMachine's object code,
linked by the system linker into a shared object where `shared` (link_shared).

Protocol, over the worker's stdin and stdout: a message is frames, each an 8-byte little-endian length and its bytes.
The worker first sends one frame `ready`; then each request is a JSON header (triple, cpu, features, opt, hang,
shared; or host) and the IR text, and each reply a JSON header (ok, the host facts; else the error and its type), the
object and the optimised IR. The
parent sends and reads without blocking, so that the deadline bounds the whole exchange; any exception inside one
(a timeout, Ctrl-C) kills the worker, whose next reply would answer the wrong request. jit.worker() replaces a worker
that died, and one a forked child inherited (`alive()` is false there).

The worker runs as a script, its folder dropped from sys.path, and imports llvmlite and the standard library only
(never torch or irc: it starts in about 60 ms). It runs one thread, ignores Ctrl-C (the parent's to handle), exits
at the end of its stdin, and on Linux dies with its parent even inside a compile that never ends (PR_SET_PDEATHSIG:
strictly, with the parent's thread that started it; one lost so is replaced at the next compile). `hang` (IRC_TEST_COMPILE_HANG) makes it
wait forever before compiling, as a pass that never ends would: the tests' slow module.
"""

import functools
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
if __name__ == "__main__" and sys.path and os.path.abspath(sys.path[0]) == _HERE:  # none of irc's runtime modules
    sys.path.pop(0)  # may shadow a module llvmlite imports

READY = b"ready"
START_TIMEOUT = 60.0  # seconds a starting worker may take to report ready (not counted in any module's deadline)
CHUNK = 1 << 20


class WorkerLost(RuntimeError):
    """The worker exited during a request (a crash in LLVM, a kill from outside)."""


class NoWorker(RuntimeError):
    """The worker could not start (no Python executable to run, llvmlite failing to load in it)."""


class CompileError(RuntimeError):
    """LLVM rejected the module (a parse or verifier error), as it would have in-process."""


@functools.cache
def llvm():
    """llvmlite's binding, imported at the first use: loading LLVM's library maps about 40 MB into a process, which
    the parent (the user's) avoids where it loads shared objects (runtime/loader.py) and the worker compiles."""
    from llvmlite import binding

    binding.initialize_native_target()
    binding.initialize_native_asmprinter()
    return binding


def new_target_machine(triple: str, cpu: str, features: str, opt: int, shared: bool = False):
    """A TargetMachine of its own (MCJIT takes ownership of the one it is given). `shared`: position-independent
    code in the small code model, for a shared object (link_shared); otherwise jitdefault, the large code model on
    x86-64, as MCJIT may load the sections anywhere in memory."""
    target = llvm().Target.from_triple(triple)
    if shared:
        return target.create_target_machine(cpu=cpu, features=features, opt=opt, reloc="pic", codemodel="default")
    return target.create_target_machine(cpu=cpu, features=features, opt=opt, codemodel="jitdefault", jit=True)


def host_facts() -> dict:
    """This machine as LLVM names it, and LLVM's version: what jit.host() and jit.versions() ask the worker."""
    b = llvm()
    return {
        "triple": b.get_process_triple(),
        "cpu": b.get_host_cpu_name(),
        "features": b.get_host_cpu_features().flatten(),
        "llvm": ".".join(map(str, b.llvm_version_info)),
    }


def linker() -> str | None:
    """The system linker that turns an object into a shared object, or None (then MCJIT loads objects)."""
    return shutil.which("ld")


def link_shared(obj: bytes) -> bytes:
    """The shared object of one ELF object (PIC). Its undefined names (torch's OpenMP entry points, memset) are
    left to the dynamic loader, which binds them in the process's global scope as MCJIT would."""
    ld = linker()
    if ld is None:
        raise CompileError("no system linker (ld) to make a shared object")
    with tempfile.TemporaryDirectory(prefix="irc-link-") as d:
        src, out = os.path.join(d, "k.o"), os.path.join(d, "k.so")
        with open(src, "wb") as f:
            f.write(obj)
        done = subprocess.run(
            [ld, "-shared", "-z", "noexecstack", "-o", out, src], check=False, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise CompileError(f"ld failed ({done.returncode}): {done.stderr.strip()}")
        with open(out, "rb") as f:
            return f.read()


target_machine = functools.cache(new_target_machine)  # the shared one per (triple, CPU, features, level)


def optimize(ir_text: str, tm, opt: int):
    """Parse, verify and run the O`opt` pipeline. The module gets its own LLVM context, freed with it (the global one
    would keep every module's constants and types for good)."""
    b = llvm()
    ref = b.parse_assembly(ir_text, b.create_context())
    ref.triple = tm.triple
    ref.data_layout = str(tm.target_data)
    ref.verify()
    pto = b.create_pipeline_tuning_options(speed_level=opt)
    pto.loop_vectorization = pto.slp_vectorization = opt >= 2
    pto.loop_interleaving = pto.loop_unrolling = opt >= 2
    pb = b.create_pass_builder(tm, pto)
    pb.getModulePassManager().run(ref, pb)
    return ref


def compile_object(
    ir_text: str, triple: str, cpu: str, features: str, opt: int, shared: bool = False
) -> tuple[bytes, str]:
    """(ELF object, or its shared object where `shared`; optimised IR text) of one module: what a worker's request
    returns."""
    tm = target_machine(triple, cpu, features, opt, shared)
    ref = optimize(ir_text, tm, opt)
    obj = tm.emit_object(ref)
    return link_shared(obj) if shared else obj, str(ref)


def frames(*parts: bytes) -> bytes:
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def _split(buf: bytearray, count: int) -> list[bytes] | None:
    """The first `count` frames of `buf`, or None while some are incomplete (nothing is copied until all are in)."""
    spans, at = [], 0
    while len(spans) < count:
        if len(buf) < at + 8:
            return None
        n = int.from_bytes(buf[at : at + 8], "little")
        if len(buf) < at + 8 + n:
            return None
        spans.append((at + 8, at + 8 + n))
        at += 8 + n
    return [bytes(buf[a:b]) for a, b in spans]


class Worker:
    """A worker process and the exchange with it; used under jit's lock, one request at a time."""

    def __init__(self):
        self.owner = os.getpid()
        self.ready = False
        self.requests = 0
        try:
            self.proc = subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), str(self.owner)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                close_fds=True,
            )
        except OSError as e:
            raise NoWorker(f"the compile worker could not start: {e}") from e
        for f in (self.proc.stdin, self.proc.stdout):
            os.set_blocking(f.fileno(), False)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.owner == os.getpid() and self.proc.poll() is None

    def _start(self) -> None:
        if not self.ready:
            try:
                self.ready = self._exchange(b"", 1, START_TIMEOUT) == [READY]
            except (TimeoutError, WorkerLost) as e:
                raise NoWorker(f"the compile worker did not start: {e}") from e
            if not self.ready:
                self.kill()
                raise NoWorker("the compile worker did not start: it answered something else")

    def _request(self, header: dict, text: str, timeout: float) -> tuple[dict, bytes, bytes]:
        self._start()
        reply, blob, opt_ir = self._exchange(frames(json.dumps(header).encode(), text.encode()), 3, timeout)
        self.requests += 1
        status = json.loads(reply)
        if not status["ok"]:
            raise CompileError(
                status["error"] if status["type"] == "RuntimeError" else f"{status['type']}: {status['error']}"
            )
        return status, blob, opt_ir

    def host(self, timeout: float = START_TIMEOUT) -> dict:
        """host_facts() as the worker's LLVM answers them."""
        return self._request({"host": True}, "", timeout)[0]["host"]

    def compile(
        self,
        ir_text: str,
        triple: str,
        cpu: str,
        features: str,
        opt: int,
        timeout: float,
        hang: bool = False,
        shared: bool = False,
    ) -> tuple[bytes, str]:
        """(object or shared object, optimised IR) within `timeout` seconds of the request, or TimeoutError with the
        worker killed."""
        header = {"triple": triple, "cpu": cpu, "features": features, "opt": opt, "hang": hang, "shared": shared}
        _, blob, opt_ir = self._request(header, ir_text, timeout)
        return blob, opt_ir.decode()

    def _exchange(self, data: bytes, count: int, timeout: float) -> list[bytes]:
        """Send `data` and read `count` frames, all within `timeout` seconds."""
        end, sent, got = time.monotonic() + timeout, 0, bytearray()
        sel = selectors.DefaultSelector()
        try:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if data:
                sel.register(self.proc.stdin, selectors.EVENT_WRITE)
            while (out := _split(got, count)) is None:
                left = end - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise TimeoutError(f"no answer from the compile worker within {timeout:g} s")
                for key, _ in sel.select(left):
                    if key.fileobj is self.proc.stdin:
                        try:
                            sent += os.write(self.proc.stdin.fileno(), data[sent : sent + CHUNK])
                        except BrokenPipeError:
                            raise self._lost() from None
                        if sent == len(data):
                            sel.unregister(self.proc.stdin)
                    else:
                        chunk = os.read(self.proc.stdout.fileno(), CHUNK)
                        if not chunk:
                            raise self._lost()
                        got += chunk
            return out
        except BaseException:
            self.kill()  # mid-exchange, its next reply would answer this request
            raise
        finally:
            sel.close()

    def _lost(self) -> WorkerLost:
        code = self.proc.wait()
        return WorkerLost(f"killed by signal {-code}" if code < 0 else f"exit status {code}")

    def kill(self) -> None:
        """Stop the worker (only the process that started it may) and close the pipes."""
        if self.owner == os.getpid() and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.close()

    def close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout):
            try:
                f.close()
            except OSError:
                pass


def _die_with(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(0)


def _read(stream, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError
    return data


def main(parent: int) -> int:
    _die_with(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at the terminal is the parent's to handle: it kills us
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the replies
    llvm()
    out.write(frames(READY))
    out.flush()
    while True:
        try:
            header = json.loads(_read(inp, int.from_bytes(_read(inp, 8), "little")))
            text = _read(inp, int.from_bytes(_read(inp, 8), "little")).decode()
        except EOFError:  # the parent closed the pipe: it is done, or gone
            return 0
        while header.get("hang"):
            time.sleep(3600)
        try:
            if header.get("host"):
                reply = frames(json.dumps({"ok": True, "host": host_facts()}).encode(), b"", b"")
            else:
                args = (text, header["triple"], header["cpu"], header["features"], header["opt"], header["shared"])
                blob, opt_ir = compile_object(*args)
                reply = frames(b'{"ok": true}', blob, opt_ir.encode())
        except Exception as e:  # noqa: BLE001 - LLVM's error goes to the parent, which raises it
            reply = frames(json.dumps({"ok": False, "type": type(e).__name__, "error": str(e)}).encode(), b"", b"")
        out.write(reply)
        out.flush()


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
