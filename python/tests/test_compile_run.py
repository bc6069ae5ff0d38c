"""Compiling from nn.Modules and running in process, against eager PyTorch."""

import numpy as np
import pytest
import torch
import torch.nn as nn

import tpuc

from conftest import REPO


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_torchvision_cnn_matches_eager():
    import torchvision

    model = torchvision.models.resnet18(num_classes=10).eval()
    x = torch.randn(2, 3, 64, 64)
    artifact = tpuc.compile(model, (x,))
    program = tpuc.load(artifact)
    got = program(x)
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, model(x).detach(), rtol=1e-4, atol=1e-4)


def test_transformers_decoder_matches_eager():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=128, max_position_embeddings=64, use_cache=False,
    )
    model = LlamaForCausalLM(cfg).eval()

    class Logits(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids):
            return self.m(input_ids=ids).logits

    wrapped = Logits(model)
    ids = torch.randint(0, 128, (2, 8))
    program = tpuc.load(tpuc.compile(wrapped, (ids,)))
    torch.testing.assert_close(program(ids), wrapped(ids).detach(), rtol=1e-4, atol=1e-5)


def test_numpy_in_numpy_out():
    model = MLP().eval()
    x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
    program = tpuc.load(tpuc.compile(model, (torch.from_numpy(x),)))
    got = program(x)
    assert isinstance(got, np.ndarray) and got.dtype == np.float32
    np.testing.assert_allclose(got, model(torch.from_numpy(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    # By keyword, and again: the same numbers.
    np.testing.assert_array_equal(program(x=x), got)


def test_every_way_of_passing_inputs_gives_the_same_numbers():
    # Host tensors of exactly the input dtypes and shapes take the native per-call path;
    # strided, grad-requiring, mixed and keyword inputs take the general one. Both must
    # give eager's numbers, in the caller's kind of array.
    class Two(nn.Module):
        def forward(self, x, k):
            y = x * k.unsqueeze(1).to(x.dtype)
            return y, y.sum()

    model = Two().eval()
    x = torch.randn(3, 4)
    k = torch.tensor([1, -2, 3])
    want = model(x, k)
    program = tpuc.load(tpuc.compile(model, (x, k)))

    def check(got, kind):
        assert isinstance(got, tuple) and len(got) == 2
        assert all(isinstance(g, kind) for g in got)
        assert tuple(got[1].shape) == ()
        for g, w in zip(got, want):
            torch.testing.assert_close(torch.as_tensor(g), w, rtol=1e-6, atol=1e-6)

    check(program(x, k), torch.Tensor)
    check(program(x.t().contiguous().t(), k), torch.Tensor)  # strided
    check(program(x.clone().requires_grad_(), k), torch.Tensor)
    check(program(x.numpy(), k.numpy()), np.ndarray)
    check(program(x, k.numpy()), torch.Tensor)  # mixed: torch out
    check(program(x=x, k=k), torch.Tensor)
    # A negative view (here of -x: its values are x's) shares its base's memory; the
    # values exist only once resolved, so only the Python path may read it.
    check(program(torch._neg_view(-x), k), torch.Tensor)
    # Outputs are host tensors whatever torch's default device is (the runtime writes
    # host memory): both paths, inside a `with torch.device(...)` block.
    with torch.device("meta"):
        got = program(x, k), program(x=x, k=k)
    for g in got:
        check(g, torch.Tensor)
    # Which path took which call: the native one answers None where Python must decide.
    assert program._native.call((x, k)) is not None
    assert program._native.call((x.numpy(), k.numpy())) is not None
    assert program._native.call((x.t().contiguous().t(), k)) is None
    assert program._native.call((x, k.numpy())) is None
    assert program._native.call((x.double(), k)) is None
    assert program._native.call((torch._neg_view(x), k)) is None
    assert program._native.call((x,)) is None
    # The outputs are new arrays each call, never a reused buffer.
    first, second = program(x, k), program(x, k)
    assert first[0].data_ptr() != second[0].data_ptr()

    # bf16 in and out (torch has bf16; numpy through ml_dtypes).
    lin = nn.Linear(4, 2).to(torch.bfloat16).eval()
    xb = torch.randn(3, 4, dtype=torch.bfloat16)
    pb = tpuc.load(tpuc.compile(lin, (xb,)))
    got = pb(xb)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got, lin(xb).detach(), rtol=2e-2, atol=2e-2)


def test_dynamic_shapes_at_two_sizes():
    model = MLP().eval()
    batch = torch.export.Dim("batch", min=1, max=32)
    program = tpuc.load(tpuc.compile(model, (torch.randn(4, 16),), dynamic_shapes={"x": {0: batch}}))
    for n in (3, 17):
        x = torch.randn(n, 16)
        got = program(x)
        assert got.shape == (n, 4)
        torch.testing.assert_close(got, model(x).detach(), rtol=1e-5, atol=1e-6)


def test_decode_step_carries_its_cache_and_generate_matches():
    data = REPO / "testdata/decode/llama"
    program = tpuc.load(tpuc.compile(str(data / "core.pt2")))
    prompt = np.load(data / "prompt.npy").reshape(-1)
    expected = np.load(data / "expected_tokens.npy").reshape(-1).tolist()
    # Three calls by hand: the cache carried, the state readable, reset returns to zero.
    logits = None
    for pos in range(3):
        logits = program(torch.tensor([[int(prompt[pos])]]), torch.tensor([pos]))
    state = program.state()
    assert state and any(v.abs().sum() > 0 for v in state.values())
    program.reset_state()
    assert all(v.abs().sum() == 0 for v in program.state().values())
    assert logits.shape[-1] > 0
    assert tpuc.generate(program, prompt, len(expected)) == expected
    assert tpuc.generate(program, prompt, 0) == []
    with pytest.raises(tpuc.InputError, match="at least one prompt token"):
        tpuc.generate(program, [], 4)
    with pytest.raises(tpuc.InputError, match="max_new_tokens"):
        tpuc.generate(program, prompt, -1)


def test_sharded_decode_state_reads_and_writes_back():
    # The llama decode step under tp=2: its KV cache is split along the heads over two
    # CPU devices. state() assembles it, load_state() splits it again, and a program
    # given another's state continues exactly as that one does; the logits match the
    # unpartitioned program's.
    source = str(REPO / "testdata/decode/llama/core.pt2")
    prompt = np.load(REPO / "testdata/decode/llama/prompt.npy").reshape(-1)
    whole = tpuc.load(tpuc.compile(source))
    sharded_artifact = tpuc.compile(source, mesh="tp=2", shard="megatron")
    split = [
        a for a in sharded_artifact.manifest["arguments"]
        if a["kind"] == "buffer" and any(d for d in (a.get("sharding") or {}).get("dims", []))
    ]
    assert split, "the cache should be split under tp=2"
    first, second = tpuc.load(sharded_artifact), tpuc.load(sharded_artifact)

    def token(pos):
        return torch.tensor([[int(prompt[pos])]]), torch.tensor([pos])

    for pos in range(3):
        want = whole(*token(pos))
        torch.testing.assert_close(first(*token(pos)), want, rtol=1e-4, atol=1e-5)
    state = first.state()
    for name, value in whole.state().items():
        torch.testing.assert_close(state[name], value, rtol=1e-4, atol=1e-5)
    second.load_state(state)
    torch.testing.assert_close(second.state()[split[0]["name"]], state[split[0]["name"]], rtol=0, atol=0)
    torch.testing.assert_close(second(*token(3)), first(*token(3)), rtol=0, atol=0)


def test_artifact_save_and_manifest(tmp_path):
    model = MLP().eval()
    artifact = tpuc.compile(model, (torch.randn(2, 16),))
    assert [a["name"] for a in artifact.manifest["arguments"] if a["kind"] == "user_input"] == ["x"]
    saved = artifact.save(tmp_path / "mlp.tpuc")
    assert (tmp_path / "mlp.tpuc" / "manifest.json").is_file()
    assert "inputs:" in saved.inspect()
    with pytest.raises(FileExistsError):
        artifact.save(tmp_path / "mlp.tpuc")


def test_tpu_report_without_a_tpu():
    from conftest import libtpu

    path = libtpu()
    if path is None:
        pytest.skip("no libtpu (make setup installs it into .deps/libtpu)")
    artifact = tpuc.compile(MLP().eval(), (torch.randn(8, 16),), topology="v5e:2x2", libtpu=path)
    report = artifact.report()
    figures = report["tpu_executables"][0]["report"]
    assert report["tpu_executables"][0]["topology"] == "v5e:2x2"
    assert figures["peak_bytes"] > 0 and figures["flops"] > 0 and figures["argument_bytes"] > 0


def test_auto_shard_for_a_tpu_slice(tmp_path, monkeypatch, caplog):
    # The planner of `tpuc plan` in process: candidates compiled by tpuc, the best few by
    # libtpu in child Pythons (a fresh cache, so they run), the chosen plan compiled for
    # the slice and run over as many CPU devices with eager's numbers.
    import logging

    from conftest import libtpu

    path = libtpu()
    if path is None:
        pytest.skip("no libtpu (make setup installs it into .deps/libtpu)")
    monkeypatch.setenv("TPUC_CACHE_DIR", str(tmp_path / "cache"))
    model = MLP().eval()
    x = torch.randn(8, 16)
    with caplog.at_level(logging.INFO, logger="tpuc"):
        artifact = tpuc.compile(model, (x,), topology="v5e:2x2", libtpu=path, auto_shard=True)
    chosen = artifact.compile_report["auto_shard"]
    assert any(r.message.startswith("plan: compiling") for r in caplog.records), caplog.text
    partitioning = artifact.manifest["partitioning"]
    mesh = ",".join(f"{a['name']}={a['size']}" for a in partitioning["mesh"]["axes"])
    assert mesh == chosen["mesh"] and partitioning["num_partitions"] == 4
    executable = artifact.report()["tpu_executables"][0]
    assert executable["topology"] == "v5e:2x2" and executable["report"]["fits"]
    torch.testing.assert_close(tpuc.load(artifact)(x), model(x).detach(), rtol=1e-5, atol=1e-6)

    # The whole table: the same choice (its measurements now cached), one plan chosen.
    table = tpuc.plan(model, (x,), topology="v5e:2x2", libtpu=path)
    assert table["devices"] == 4 and table["hbm_bytes_per_device"] > 0
    picked = [p for p in table["plans"] if p["chosen"]]
    assert len(picked) == 1, table
    assert picked[0]["mesh"] == chosen["mesh"] and picked[0]["strategies"] == chosen["shard"]
    assert picked[0]["measured"]["fits"] and picked[0]["cached"]
    with pytest.raises(tpuc.OptionError, match="drop `mesh`"):
        tpuc.plan(model, (x,), topology="v5e:2x2", mesh="dp=4")
    with pytest.raises(tpuc.OptionError, match="top: 0"):
        tpuc.plan(model, (x,), topology="v5e:2x2", top=0)

    with pytest.raises(tpuc.OptionError, match="auto_shard plans for a TPU slice"):
        tpuc.compile(model, (x,), auto_shard=True)
    with pytest.raises(tpuc.OptionError, match="drop `mesh`"):
        tpuc.compile(model, (x,), topology="v5e:2x2", auto_shard=True, mesh="dp=4")
    with pytest.raises(TypeError, match="auto_shard"):
        tpuc.compile(model, (x,), topology="v5e:2x2", auto_shard="yes")


def test_sharded_over_two_cpu_devices(tmp_path):
    # mesh and shard, or a rules file naming them (as `tpuc plan --write-rules` writes
    # it): one SPMD program over the 2 CPU devices `load` asks for, eager's numbers.
    model = MLP().eval()
    x = torch.randn(4, 16)
    want = model(x).detach()
    program = tpuc.load(tpuc.compile(model, (x,), mesh="dp=2", shard="data-parallel"))
    torch.testing.assert_close(program(x), want, rtol=1e-5, atol=1e-6)

    rules = tmp_path / "rules.txt"
    rules.write_text("mesh: fsdp=2\nshard: fsdp\nfc2.weight [-, fsdp]\n")
    artifact = tpuc.compile(model, (x,), sharding_rules=rules)
    args = {a["name"]: a for a in artifact.manifest["arguments"]}
    assert artifact.manifest["partitioning"]["mesh"]
    assert any(a.get("sharding") for a in args.values())
    torch.testing.assert_close(tpuc.load(artifact)(x), want, rtol=1e-5, atol=1e-6)

    with pytest.raises(tpuc.OptionError, match="shard and sharding_rules need mesh"):
        tpuc.compile(model, (x,), shard="fsdp")
    with pytest.raises(tpuc.OptionError, match="mesh fsdp=4 differs from the mesh"):
        tpuc.compile(model, (x,), mesh="fsdp=4", sharding_rules=rules)
