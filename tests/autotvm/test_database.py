"""``autotvm.database`` (TVM's measurement database; :class:`DummyDatabase` in memory), and the
record module's pickle protocol, ``measure_str_key`` and ``split_workload``.
"""

from __future__ import annotations

import copy
import pickle
from pathlib import Path

import pytest

from pytvm import autotvm
from pytvm.autotvm import database
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.record import decode, encode, load_from_file, measure_str_key, split_workload
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.autotvm import get_sample_records


def test_dummy_database_keeps_the_latest_or_all_results() -> None:
    (inp, res), (other, _) = get_sample_records(2)
    db = database.DummyDatabase()
    assert db.load(inp) is None
    db.save(inp, res._replace(timestamp=5.0), extend=True)
    db.save(inp, res._replace(timestamp=7.0), extend=True)
    assert db.load(inp).timestamp == 7.0
    assert [r.timestamp for r in db.load(inp, get_all=True)] == [5.0, 7.0]
    db.save(inp, res._replace(timestamp=1.0))  # no extend: replaces
    assert [r.timestamp for r in db.load(inp, get_all=True)] == [1.0]
    db.save(other, res._replace(error_no=4))
    partial, unsaved = database.filter_inputs(db, [inp, other], retry=True)
    assert partial[0] is not None and partial[1] is None and unsaved == [other]
    assert [i.config.index for i, _ in db.filter(lambda i, rs: rs[0].error_no == 0)] == [0]
    db.flush()
    assert db.load(inp) is None


def test_inputs_that_differ_in_code_hash_are_kept_apart() -> None:
    inp, res = get_sample_records(1)[0]
    twin = copy.deepcopy(inp)  # the target deep-copies and pickles as its text and host
    assert twin.target == inp.target and pickle.loads(pickle.dumps(inp.target)) == inp.target
    inp.config.code_hash, twin.config.code_hash = "cafe", "beef"
    db = database.DummyDatabase()
    db.save(inp, res)
    db.save(twin, res._replace(timestamp=-1.0))
    assert measure_str_key(inp) != measure_str_key(twin)
    assert measure_str_key(inp, False) == measure_str_key(twin, False)
    assert db.load(inp).timestamp != -1.0 and db.load(twin).timestamp == -1.0


def test_redis_database_without_redis_names_the_package() -> None:
    try:
        import redis  # noqa: F401
    except ImportError:
        with pytest.raises(TVMValueError, match="'redis' package"):
            database.RedisDatabase()
    else:
        pytest.skip("the redis package is installed; the error path cannot be taken")


def test_pickle_rows_round_trip_and_refuse_classes() -> None:
    inp, res = get_sample_records(1)[0]
    row = encode(inp, res, protocol="pickle")
    assert row.count("\t") == 4 and row.split("\t")[0] == str(inp.target)
    decoded = decode(row, protocol="pickle")
    assert decoded is not None
    inp2, res2 = decoded
    assert measure_str_key(inp2) == measure_str_key(inp) and res2 == res
    # A row pickling an object (what TVM writes) is refused without loading the class.
    evil = row.split("\t")
    import base64

    evil[2] = base64.b64encode(pickle.dumps(Path("/"))).decode()
    with pytest.raises(TVMValueError, match="pathlib"):
        decode("\t".join(evil), protocol="pickle")
    with pytest.raises(TVMValueError, match="protocol"):
        encode(inp, res, protocol="yaml")


def test_split_workload_writes_one_clean_file_per_workload(tmp_path: Path) -> None:
    records = get_sample_records(4)
    log = tmp_path / "tune.log"
    with log.open("w") as f:
        autotvm.callback.log_to_file(f)(None, *zip(*(records + records[:2]), strict=True))
    split_workload(log)
    (out,) = sorted(tmp_path.glob("tune.log.*.wkl"))
    assert out.name == "tune.log.000.wkl"
    assert [i.config.index for i, _ in load_from_file(out)] == [0, 1, 2, 3]
    split_workload(log, clean=False)
    assert len(load_from_file(out)) == 6


def test_measure_input_pairs_are_what_the_database_stores() -> None:
    inp, res = get_sample_records(1)[0]
    assert isinstance(inp, MeasureInput) and isinstance(res, MeasureResult)
