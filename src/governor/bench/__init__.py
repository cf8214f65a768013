"""Benchmarks that reproduce the papers' experiments, and the offline demo built from them."""
