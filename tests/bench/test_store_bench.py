"""`governor bench store`: one row per store, a PostgreSQL store measured pooled and not."""

from __future__ import annotations

import pytest

from governor.bench.store_cycle import StoreBenchConfig, run
from governor.guard.stores.postgres import PostgresStore

TINY = StoreBenchConfig(cycles=3, rounds=2)


def test_the_default_is_sqlite_and_every_cycle_really_writes(
    tmp_path: pytest.TempPathFactory,
) -> None:
    result = run(TINY, [])
    assert [r["store"] for r in result["rows"]] == ["sqlite"]
    assert result["rows"][0]["cycle_ms"] > 0
    assert result["config"] == {"cycles": 3, "rounds": 2}


@pytest.mark.postgres
def test_a_postgres_store_is_measured_with_and_without_its_pool(postgres_dsn: str) -> None:
    result = run(TINY, [f"postgres:{postgres_dsn}", "memory"])
    names = [r["store"] for r in result["rows"]]
    assert names == ["postgres, a connection per call", "postgres, pooled", "memory"]
    assert [r["t"] for r in PostgresStore(postgres_dsn).records("bench")] == [0, 1, 2] * 4
