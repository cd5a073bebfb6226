"""The trainer core shared by train and refine run: the schedule and trainer state on disk."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from macaron_local.refine.trainer import load_state, lr_at, save_state, set_lr


def test_schedule_warms_up_then_decays_to_a_tenth_of_the_peak() -> None:
    lrs = [lr_at(step, peak=1.0, warmup=4, total=20) for step in range(21)]
    assert lrs[:5] == [0.25, 0.5, 0.75, 1.0, 1.0]
    assert all(a >= b for a, b in zip(lrs[4:], lrs[5:], strict=False))
    assert lrs[20] == pytest.approx(0.1)
    assert lr_at(0, peak=2e-3, warmup=0, total=1) == pytest.approx(2e-3)


def _trained(seed: int) -> tuple[torch.nn.Linear, torch.optim.Optimizer]:
    torch.manual_seed(seed)
    model = torch.nn.Linear(3, 2)
    model.bias.requires_grad_(False)  # frozen: not trainer state
    opt = torch.optim.AdamW([model.weight], lr=0.1)
    model(torch.ones(1, 3)).sum().backward()
    opt.step()
    return model, opt


def test_state_restores_the_trainable_parameters_the_optimizer_and_the_progress(
    tmp_path: Path,
) -> None:
    model, opt = _trained(0)
    path = save_state(tmp_path / "run" / "resume.pt", model, opt, {"step": 7, "sft": [0.5]})
    assert path.is_file() and not path.with_name("resume.pt.part").exists()
    other, other_opt = _trained(1)
    bias = other.bias.detach().clone()
    set_lr(other_opt, 0.5)
    assert load_state(path, other, other_opt) == {"step": 7, "sft": [0.5]}
    assert torch.equal(other.weight, model.weight)
    assert torch.equal(other.bias, bias)  # frozen parameters are not part of the state
    assert other_opt.param_groups[0]["lr"] == 0.1
    saved, loaded = opt.state_dict()["state"][0], other_opt.state_dict()["state"][0]
    assert torch.equal(saved["exp_avg"], loaded["exp_avg"])
