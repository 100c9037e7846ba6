"""The reference target (targets.Target): xDSL's interpreter over the module at whatever stage it is,
each op given its meaning by a torch call. The fallback of the others: it runs every graph they cannot."""

from irc import report
from irc.options import Options


class ReferenceTarget:
    name = "reference"
    stage = "tensor-opt"

    def machine_facts(self) -> str:
        return ""  # its lowering reads nothing of the machine

    def conv_timer(self, opts: Options):
        return None

    def library_allocates(self, args):
        return None  # every extern writes a planned buffer

    def transposed_products(self, args):
        return None  # every product is computed as it is written

    def biased_products(self, args):
        return None  # a bias is added by a kernel of its own

    def select_matmul(self, module, args, opts: Options, rep: report.GraphReport, build):
        return build("extern", rep)

    def compile(self, module, args, opts: Options, rep: report.GraphReport, key: str | None = None):
        """Runs a tn module (tensor or tensor-opt stage) or a mem-stage one."""
        from irc.dialects import memory

        if any(isinstance(op, memory.LaunchOp | memory.ExternOp | memory.ArenaOp) for op in module.walk()):
            from .memory import MemRunner

            return MemRunner(module)
        from . import make_interpreter

        interpreter = make_interpreter(module)
        return lambda args: interpreter.call_op("main", tuple(args))
