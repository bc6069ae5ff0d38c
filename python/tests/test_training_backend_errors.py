"""Training from an nn.Module, torch.compile(backend="tpuc"), and every bad input."""

import _thread
import os
import signal
import threading

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import tpuc


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x, labels):
        return (F.cross_entropy(self.fc2(F.gelu(self.norm(self.fc1(x)))), labels),)


def test_training_step_reproduces_adamw(tmp_path):
    g = torch.Generator().manual_seed(3)
    xs = torch.randn(10, 8, 16, generator=g)
    ys = torch.randint(0, 10, (10, 8), generator=g)
    torch.manual_seed(0)
    model = Classifier().train()
    torch.manual_seed(0)
    reference = Classifier().train()
    opt = torch.optim.AdamW(reference.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
    want = []
    for k in range(10):
        (loss,) = reference(xs[k], ys[k])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 1.0)
        opt.step()
        want.append(loss.item())
    artifact = tpuc.compile(
        model, (xs[0], ys[0]), train=True, optimizer="adamw", lr=3e-3, betas=(0.9, 0.95),
        weight_decay=0.1, clip_grad_norm=1.0,
    )
    program = tpuc.load(artifact)
    got = [program.step(xs[k], ys[k]).loss for k in range(10)]
    np.testing.assert_allclose(got, want, rtol=1e-4)
    state = program.state_dict()
    for name, value in reference.state_dict().items():
        torch.testing.assert_close(state[name], value, rtol=1e-3, atol=1e-4)
    # A checkpoint and a fresh program continuing from it: the same next loss.
    program.save_checkpoint(tmp_path / "ckpt")
    again = tpuc.load(artifact)
    again.load_checkpoint(tmp_path / "ckpt")
    assert again.steps_taken == 10
    assert again.step(xs[0], ys[0]).loss == program.step(xs[0], ys[0]).loss
    # Calling a training step like an inference program would train it silently.
    with pytest.raises(tpuc.RuntimeError, match=r"call program.step"):
        again(xs[0], ys[0])
    assert again.steps_taken == 11
    # A forward that does not return a scalar loss first: torch's error, with a hint.
    with pytest.raises(Exception) as failed:
        tpuc.compile(nn.Linear(16, 4), (xs[0],), train=True)
    assert any("(loss,)" in n for n in getattr(failed.value, "__notes__", [])), failed.value


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
        self.n1, self.n2 = nn.LayerNorm(32), nn.LayerNorm(32)

    def forward(self, x):
        h = self.n1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.n2(x))


@pytest.mark.parametrize("make", [lambda: nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)), Block])
def test_torch_compile_backend_matches_eager(make):
    torch._dynamo.reset()
    model = make().eval()
    x = torch.randn(2, 16) if isinstance(model, nn.Sequential) else torch.randn(2, 5, 32)
    compiled = torch.compile(model, backend="tpuc", dynamic=False)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_torch_compile_of_a_module_updating_its_buffers_is_refused_with_a_hint():
    # BatchNorm in training mode updates its running statistics, buffers torch.compile
    # passes in as inputs: refused (not run with the statistics left behind), naming eval().
    torch._dynamo.reset()
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8))
    with pytest.raises(Exception, match=r"model\.eval\(\)"):
        torch.compile(model, backend="tpuc")(torch.randn(5, 4))
    # tpuc.compile keeps them as state instead: the running statistics follow eager's.
    x = torch.randn(5, 4)
    program = tpuc.load(tpuc.compile(model, (x,)))
    for k in range(3):
        xk = torch.randn(5, 4)
        torch.testing.assert_close(program(xk), model(xk).detach(), rtol=1e-5, atol=1e-6)
    state = program.state()
    torch.testing.assert_close(state["b_1_running_mean"], model[1].running_mean)
    torch.testing.assert_close(state["b_1_running_var"], model[1].running_var)
    assert int(state["b_1_num_batches_tracked"]) == int(model[1].num_batches_tracked) == 3


@pytest.mark.parametrize("dynamic", [None, True])
def test_torch_compile_backend_runs_every_size(dynamic):
    # Dynamo marks the size dynamic after two values (dynamic=None) or from the start
    # (dynamic=True, which also hands LayerNorm's eps over as a tensor): each new size
    # is compiled at its first call, and a size seen before reuses its program.
    torch._dynamo.reset()
    model = Block().eval()
    compiled = torch.compile(model, backend="tpuc", dynamic=dynamic)
    with torch.no_grad():
        for length in (5, 7, 5, 9):
            x = torch.randn(2, length, 32)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)


def test_bad_options_are_named():
    model = nn.Linear(4, 2)
    x = torch.randn(1, 4)
    with pytest.raises(TypeError, match="opt_level"):
        tpuc.compile(model, (x,), opt_level="2")
    with pytest.raises(TypeError, match="nonsense"):
        tpuc.compile(model, (x,), nonsense=1)
    with pytest.raises(ValueError, match="matmul_precision"):
        tpuc.compile(model, (x,), matmul_precision="fast")
    with pytest.raises(tpuc.OptionError, match="lr"):
        tpuc.compile(Classifier(), (torch.randn(2, 16), torch.tensor([1, 2])), train=True, lr=-1.0)
    with pytest.raises(ValueError, match="optimizer"):
        tpuc.compile(model, (x,), optimizer="sgd")
    artifact = tpuc.compile(model, (x,))
    with pytest.raises(tpuc.OptionError, match="devices: 0"):
        tpuc.load(artifact, devices=0)
    with pytest.raises(TypeError, match="devices"):
        tpuc.load(artifact, devices="2")


def test_help_explains_every_option():
    # help(tpuc.compile) names each keyword compile() accepts.
    import re

    doc = tpuc.compile.__doc__
    assert [k for k in tpuc._OPTIONS if not re.search(rf"\b{k}\b", doc)] == []


def test_an_unexportable_module_gives_the_exporters_error_with_a_hint():
    class DataDependent(nn.Module):
        def forward(self, x):
            if x.sum() > 0:  # a branch on a value: torch.export refuses it
                return x + 1
            return x - 1

    with pytest.raises(Exception) as e:
        tpuc.compile(DataDependent(), (torch.randn(3),))
    assert not isinstance(e.value, tpuc.TpucError)  # the exporter's own
    assert any("hint (tpuc)" in n for n in getattr(e.value, "__notes__", []))


def test_a_program_tpuc_cannot_compile_names_the_node():
    class Random(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(10, 5)

        def forward(self, x, labels):
            return (F.cross_entropy(self.fc(F.dropout(x, 0.5, training=True)), labels),)

    with pytest.raises(tpuc.CompileError) as e:
        tpuc.compile(Random(), (torch.randn(4, 10), torch.tensor([1, 2, 3, 4])), train=True)
    assert e.value.node and "dropout" in e.value.op and e.value.hint
    # An instance norm updating running statistics: refused at its node, not left stale.
    with pytest.raises(tpuc.CompileError) as e:
        tpuc.compile(nn.InstanceNorm1d(3, track_running_stats=True), (torch.randn(2, 3, 5),))
    assert "instance_norm" in e.value.op and "model.eval()" in e.value.hint


def test_inputs_of_the_wrong_dtype_shape_or_count_are_named():
    model = nn.Linear(4, 2).eval()
    program = tpuc.load(tpuc.compile(model, (torch.randn(3, 4),)))
    with pytest.raises(tpuc.InputError, match="input `input`.*f32.*i64"):
        program(torch.ones(3, 4, dtype=torch.int64))
    with pytest.raises(tpuc.InputError, match="input"):
        program(torch.randn(5, 4))
    with pytest.raises(tpuc.InputError, match="expected 1 input"):
        program(torch.randn(3, 4), torch.randn(3, 4))
    with pytest.raises(tpuc.InputError, match="missing input"):
        program()
    with pytest.raises(tpuc.InputError, match="input `input`: a torch.sparse_coo tensor"):
        program(torch.randn(3, 4).to_sparse())
    with pytest.raises(tpuc.InputError, match="input `input` is on the meta device"):
        program(torch.empty(3, 4, device="meta"))
    # A non-contiguous tensor is made contiguous: the same numbers.
    x = torch.randn(4, 3).t()
    torch.testing.assert_close(program(x), model(x).detach(), rtol=1e-5, atol=1e-6)
    # A big-endian numpy array holds the same values: swapped, not refused.
    xb = x.numpy().astype(">f4")
    np.testing.assert_allclose(program(xb), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_a_missing_plugin_is_an_exception_not_an_abort():
    artifact = tpuc.compile(nn.Linear(4, 2), (torch.randn(1, 4),))
    with pytest.raises(tpuc.RuntimeError):
        tpuc.load(artifact, plugin="/nonexistent/plugin.so")
    with pytest.raises(RuntimeError):  # also Python's own
        tpuc.load(artifact, plugin="/nonexistent/plugin.so")
    # A shared library that is not a PJRT plugin (numpy's own extension module).
    import numpy._core._multiarray_umath as not_a_plugin

    with pytest.raises(tpuc.RuntimeError, match="GetPjrtApi"):
        tpuc.load(artifact, plugin=not_a_plugin.__file__)


def test_ctrl_c_during_a_compile_leaves_no_artifact(tmp_path):
    import time

    import torchvision

    from conftest import libtpu

    model = torchvision.models.resnet50(num_classes=10).eval()
    x = torch.randn(1, 3, 32, 32)
    pt2 = tmp_path / "resnet50.pt2"
    torch.export.save(torch.export.export(model, (x,)), pt2)
    out = tmp_path / "interrupted.tpuc"
    # With libtpu the compile also builds a TPU executable: seconds, well past the
    # interrupt; without it the compile may end first, and the test says so.
    options = {"topology": "v5e:1x1", "libtpu": libtpu()} if libtpu() else {}
    # Python's own Ctrl-C handler, also where SIGINT is ignored (a CI run under nohup).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.2, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    try:
        tpuc.compile(str(pt2), output=out, **options)
        # Ended before the interrupt could arrive: let it land here, harmlessly.
        elapsed = time.monotonic() - start
        time.sleep(0.5)
        pytest.skip(f"the compile ended in {elapsed:.2f} s, before the interrupt")
    except KeyboardInterrupt:
        pass
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    # The compile thread stops at its next stage, publishes nothing, and removes its
    # temporary directory.
    deadline = time.monotonic() + 180
    while sorted(os.listdir(tmp_path)) != ["resnet50.pt2"] and time.monotonic() < deadline:
        assert not out.exists()
        time.sleep(0.5)
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["resnet50.pt2"]
