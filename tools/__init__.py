"""Developer tooling shared by the tests and the benchmarks (not part of the served application)."""
