"""torch.distributed: a model wrapped in DistributedDataParallel (gloo, 2 processes on the CPU) and compiled
with irc trains as the eager DDP model does: each rank sees its own batch, DDP averages the gradients across
ranks, and the loss, every gradient and every parameter after an SGD step match the eager DDP run."""

import os
import warnings

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

WORLD = 2


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU())
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.body(x))


def _step(model, opt, x, y):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.module.named_parameters()}
    opt.step()
    return loss.detach(), grads


def _worker(rank: int, init: str, steps: int, done: str) -> None:
    import irc
    from torch.nn.parallel import DistributedDataParallel as DDP

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=WORLD)
    try:
        torch.manual_seed(0)  # the same initial weights on every rank (DDP also broadcasts rank 0's)
        eager_net = Net()
        mine_net = Net()
        mine_net.load_state_dict(eager_net.state_dict())
        eager, mine = DDP(eager_net), DDP(mine_net)
        compiled = torch.compile(mine, backend=irc.backend, options={"strict": True})
        opt_e = torch.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
        opt_m = torch.optim.SGD(mine.parameters(), lr=0.1, momentum=0.9)
        g = torch.Generator().manual_seed(100 + rank)  # each rank its own batch
        for _ in range(steps):
            x, y = torch.randn(8, 16, generator=g), torch.randint(0, 4, (8,), generator=g)
            want_loss, want = _step(eager, opt_e, x, y)
            got_loss, got = _step(compiled, opt_m, x, y)
            torch.testing.assert_close(got_loss, want_loss, rtol=1e-4, atol=1e-5)
            for n in want:
                torch.testing.assert_close(
                    got[n], want[n], rtol=1e-3, atol=1e-5, msg=lambda m: f"rank {rank} grad {n}: {m}"
                )
        for (n, p), q in zip(eager.module.named_parameters(), mine.module.parameters()):
            torch.testing.assert_close(q, p, rtol=1e-4, atol=1e-5, msg=lambda m: f"rank {rank} parameter {n}: {m}")
        # DDP averaged the gradients: both ranks hold the same parameters after the steps
        flat = torch.cat([p.detach().reshape(-1) for p in mine.module.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(WORLD)]
        dist.all_gather(gathered, flat)
        torch.testing.assert_close(gathered[0], gathered[1], rtol=0, atol=0)
        if rank == 0:
            reports = irc.report.reports_since(0)
            kinds = {g.kind for g in reports.graphs}
            assert {"forward", "backward"} <= kinds and reports.native, str(reports)
        open(f"{done}{rank}", "w").close()  # every check of this rank passed
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="torch built without gloo")
def test_ddp_training_step_matches_eager(tmp_path):
    """Two processes, gloo over a file store (no port to pick): two SGD steps of a compiled DDP model."""
    env = {"OMP_NUM_THREADS": "1", "IRC_PROGRESS": "0", "GLOO_SOCKET_IFNAME": "lo"}  # one machine: loopback
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        # A worker killed by a signal (SIGABRT, "terminate called without an active exception", from C++ inside
        # gloo's process group: about 1 run in 15 here, twice in a row once in CI under the full suite's load) is
        # no verdict on irc: if every rank had passed all its checks (its `done` file), the crash was in the
        # group's teardown and the test stands; if not, the run starts again on a fresh store, up to three times.
        # A failed assertion is not a signal: it raises ProcessRaisedException at once.
        for attempt in range(3):
            done = str(tmp_path / f"done{attempt}-")
            try:
                mp.spawn(_worker, args=(f"file://{tmp_path / f'store{attempt}'}", 2, done), nprocs=WORLD, join=True)
                break
            except mp.ProcessExitedException as e:
                if not e.signal_name or attempt == 2:
                    raise
                if all(os.path.exists(f"{done}{rank}") for rank in range(WORLD)):
                    warnings.warn(f"DDP worker died with {e.signal_name} after every check passed (gloo's teardown)")
                    break
                warnings.warn(f"DDP worker died with {e.signal_name}; running the test once more")
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
