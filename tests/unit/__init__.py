"""Tests of single modules: utils and the benchmarks, on fakes where hardware is needed."""
