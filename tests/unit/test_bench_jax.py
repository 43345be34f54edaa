"""utils.timing.bench with JAX: dtypes given as JAX's (or numpy's) scalar types get their peak."""

from __future__ import annotations

import numpy as np
import pytest

from utils.platform.chips import Chip
from utils.timing import bench


@pytest.mark.parametrize(
    "dtype, name",
    [(np.float32, "float32"), (np.float16, "float16"), ("bf16", "bfloat16"), (None, None)],
)
def test_numpy_scalar_types_are_named(dtype, name):
    assert bench._dtype_name(dtype) == name


def test_jax_scalar_types_are_named_and_reach_the_peak():
    jnp = pytest.importorskip("jax.numpy")
    assert bench._dtype_name(jnp.float32) == "float32"
    assert bench._dtype_name(jnp.bfloat16) == "bfloat16"
    assert bench._dtype_name(jnp.ones(2, jnp.bfloat16).dtype) == "bfloat16"
    # Before: jnp.float32 became "<class 'jax.numpy.float32'>" and no peak was found.
    peak = Chip("chip", {"float32": 1.0}, None, None, "test", "2026-11")
    x = jnp.ones((64, 64))
    m = bench.measure(
        lambda a: a @ a,
        x,
        flops=2 * 64**3,
        dtype=jnp.float32,
        peak=peak,
        min_time=0.01,
        min_blocks=2,
    )
    assert m.backend == "jax" and m.dtype == "float32" and m.percent_of_peak is not None


def test_other_types_are_left_alone():
    class Custom:  # a type numpy cannot turn into a dtype
        pass

    assert bench._dtype_name(Custom) == str(Custom)
