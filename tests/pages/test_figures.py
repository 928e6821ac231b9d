"""The significant-figure rule, checked against torch.utils.benchmark itself."""

from __future__ import annotations

import random

import pytest

from ledger.analysis.figures import (
    format_figure,
    supported_digits,
    supported_digits_from_samples,
    supported_digits_relative,
    trim,
)


def test_a_21_to_23_percent_spread_supports_one_figure():
    assert supported_digits_relative(23) == 1
    assert format_figure(9.14, 9.14 * 0.23, "x") == "9x"


def test_bounds_are_torchs():
    assert supported_digits(1.0, 0.0) == 4
    assert supported_digits(1.0, 1e-9) == 4
    assert supported_digits(1.0, 10.0) == 1
    assert supported_digits(0.0, 1.0) == 1


def test_trim():
    assert trim(3.14159, 2) == pytest.approx(3.1)
    assert trim(0.022345, 2) == pytest.approx(0.022)


@pytest.mark.parametrize("seed", range(6))
def test_samples_estimate_matches_torch_utils_benchmark(seed):
    torch_benchmark = pytest.importorskip("torch.utils.benchmark")
    rng = random.Random(seed)
    scale = 10 ** rng.uniform(-4, 0)
    noise = 10 ** rng.uniform(-4, -0.5)
    times = [scale * (1 + rng.gauss(0, noise)) for _ in range(rng.randint(5, 60))]
    measurement = torch_benchmark.Measurement(1, times, torch_benchmark.utils.common.TaskSpec("pass", "pass"))
    assert supported_digits_from_samples(times) == measurement.significant_figures
