"""One exception class per status, under tether.TetherError."""

import concurrent.futures
import pickle

import pytest

import tether
from tether import _errors, _tether


def test_every_status_code_has_its_class():
    names = _tether.status_names()
    assert set(_errors.BY_CODE) == set(names) - {0}
    for code, cls in _errors.BY_CODE.items():
        assert issubclass(cls, tether.TetherError)
        assert cls.code == code
        assert getattr(tether, cls.__name__) is cls


def test_classes_are_also_the_builtin_they_mean():
    assert issubclass(tether.Timeout, TimeoutError)
    assert issubclass(tether.Cancelled, concurrent.futures.CancelledError)
    assert issubclass(tether.InvalidArgument, ValueError)
    assert issubclass(tether.NotFound, LookupError)
    assert issubclass(tether.NoMemory, MemoryError)


def test_errors_pickle_with_their_fields():
    e = _errors.make_error(8, "actor dead", "worker", 3, "", ValueError("ctor"))
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is tether.ActorDead
    assert (str(back), back.thread_name, back.user_code) == ("actor dead", "worker", 3)


def test_unknown_code_is_a_plain_tether_error():
    e = _errors.make_error(99, "what", "", 0, "", None)
    assert type(e) is tether.TetherError and e.code == 99


def test_status_raised_by_a_refused_call_carries_the_library_detail():
    a = tether.Actor(dict)
    with pytest.raises(tether.NotFound) as info:
        a.call_in("nope", lambda s: None)
    assert "nope" in str(info.value) or "group" in str(info.value)
    a.close()
