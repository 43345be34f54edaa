"""utils.platform.placement: choosing devices, and the mixed-device error recognised and explained."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from utils import i18n  # noqa: E402
from utils.platform import placement  # noqa: E402


def pretend(monkeypatch, kind: str | None, count: int = 1) -> None:
    """Let torch.accelerator report `count` devices of `kind` (None: no accelerator)."""
    monkeypatch.setattr(torch.accelerator, "is_available", lambda: kind is not None)
    monkeypatch.setattr(
        torch.accelerator,
        "current_accelerator",
        lambda *args, **kwargs: torch.device(kind) if kind else None,
    )
    monkeypatch.setattr(torch.accelerator, "device_count", lambda: count if kind else 0)


# --- choosing a device -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["cuda", "mps", "xpu"])
def test_pick_device_asks_torch_accelerator(monkeypatch, kind):
    pretend(monkeypatch, kind)
    assert placement.pick_device().type == kind


def test_pick_device_without_torch_accelerator(monkeypatch):
    # torch before 2.6 has no torch.accelerator: ask CUDA, then MPS, then take the CPU.
    monkeypatch.delattr(torch, "accelerator")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert placement.pick_device() == torch.device("cpu")
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert placement.pick_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert placement.pick_device() == torch.device("cuda")


def test_pick_device_here_matches_torch():
    if torch.accelerator.is_available():
        assert placement.pick_device() == torch.accelerator.current_accelerator()
    else:
        assert placement.pick_device() == torch.device("cpu")


def test_list_devices(monkeypatch):
    pretend(monkeypatch, "cuda", 2)
    assert placement.list_devices() == [torch.device(x) for x in ("cpu", "cuda:0", "cuda:1")]
    pretend(monkeypatch, None)
    assert placement.list_devices() == [torch.device("cpu")]


def test_try_gpu_with_two_gpus(monkeypatch, capsys):
    pretend(monkeypatch, "cuda", 2)
    assert placement.try_gpu(1) == torch.device("cuda:1")
    assert placement.try_gpu() == torch.device("cuda:0")
    assert capsys.readouterr().out == ""


def test_try_gpu_falls_back_and_says_why(monkeypatch, capsys):
    pretend(monkeypatch, "cuda", 1)  # Colab: one T4
    assert placement.try_gpu(1) == torch.device("cuda:0")
    out = capsys.readouterr().out
    assert "no GPU number 1" in out and "cuda:0" in out
    i18n.set_language("de")
    pretend(monkeypatch, None)
    assert placement.try_gpu(1) == torch.device("cpu")
    assert "keine GPU Nummer 1" in capsys.readouterr().out
    assert placement.try_gpu(3, quiet=True) == torch.device("cpu")
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("index", [-1, 1.0, True, "1"])
def test_try_gpu_rejects_odd_indices(index):
    with pytest.raises(ValueError, match="whole number"):
        placement.try_gpu(index)


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="this machine has cuda:1")
def test_hard_coded_second_gpu_fails_here():
    # What the lesson shows: code written for Kaggle's T4 x2 stops on a machine with fewer GPUs.
    with pytest.raises((RuntimeError, AssertionError)):
        torch.ones(1, device="cuda:1")


# --- where things live, and the mixed-device error --------------------------------------------------


def test_where():
    net = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.Linear(3, 1))
    assert placement.where(torch.ones(2)) == "cpu"
    assert placement.where(net) == "cpu"
    net[1].to("meta")
    assert placement.where(net) == "cpu (2×) + meta (2×)"
    assert placement.where([torch.ones(1), torch.ones(1, device="meta")]) == "cpu (1×) + meta (1×)"
    assert placement.where({"x": torch.ones(1)}) == "cpu"
    assert placement.where(torch.nn.ReLU()) == "no parameters"
    assert placement.where(3.0) == "not a tensor (float)"


MIXED = [
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
    "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
    "Expected all tensors to be on the same device, but got mat2 is on cuda:0, different from other "
    "tensors on cpu (when checking argument in method wrapper_CUDA_mm)",
    "Tensor on device meta is not on the expected device cpu!",
    "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or "
    "input should be a MKLDNN tensor and weight is a dense tensor",
    "Input and parameter tensors are not at the same device, found input tensor at cpu and "
    "parameter tensor at cuda:0",
    "indices should be either on cpu or on the same device as the indexed tensor (cpu)",
    "Placeholder storage has not been allocated on MPS device!",
    "Expected object of device type cuda but got device type cpu for argument #1 'self'",
]


@pytest.mark.parametrize("text", MIXED)
def test_mixed_device_messages_are_recognised(text):
    assert placement.is_mixed_device_error(RuntimeError(text))


@pytest.mark.parametrize(
    "error",
    [
        RuntimeError("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"),
        RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"),
        ValueError("Expected all tensors to be on the same device"),  # not PyTorch's error type
    ],
)
def test_other_errors_are_not_mixed_device_errors(error):
    assert not placement.is_mixed_device_error(error)


def test_real_mixed_device_error_is_caught_and_explained(capsys):
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    net.to("meta")
    batch = torch.randn(5, 4)
    with placement.catch_mixed_devices(model=net, batch=batch) as caught:
        net(batch)
        pytest.fail("the forward pass should have raised")  # pragma: no cover
    assert caught and placement.is_mixed_device_error(caught.error)
    out = capsys.readouterr().out
    assert out.strip() == caught.message
    assert "model  meta" in out and "batch  cpu" in out
    assert 'batch = batch.to("meta")' in out and "model.to(" not in out
    i18n.set_language("de")
    with placement.catch_mixed_devices(quiet=True, model=net, batch=batch) as caught:
        net(batch)
    assert "Bring zuerst alles auf ein Gerät" in caught.message
    assert capsys.readouterr().out == ""


def test_explanation_moves_the_model_to_the_accelerator_not_the_batch_back():
    net = torch.nn.Linear(2, 2)  # still on the CPU
    batch = torch.ones(1, 2, device="meta")  # already on the "accelerator"
    message = placement.explain_mixed_devices(RuntimeError(MIXED[2]), model=net, batch=batch)
    assert 'model.to("meta")' in message and "batch = batch" not in message


def test_explanation_when_the_culprit_is_made_inside_the_code():
    x = torch.ones(3, 4, device="meta")
    with placement.catch_mixed_devices(quiet=True, x=x) as caught:
        _ = x + torch.arange(4)  # arange makes its tensor on the CPU
    assert caught and "device=x.device" in caught.message


def test_catch_mixed_devices_lets_other_errors_through():
    with (
        pytest.raises(RuntimeError, match="shapes cannot be multiplied"),
        placement.catch_mixed_devices(a=torch.ones(2, 3)),
    ):
        _ = torch.ones(2, 3) @ torch.ones(4, 5)


def test_catch_mixed_devices_without_an_error():
    with placement.catch_mixed_devices(x=torch.ones(1)) as caught:
        _ = torch.ones(1) + 1
    assert not caught and caught.message is None
