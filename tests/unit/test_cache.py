"""irc.cache in one process: verified entries, least-recently-used eviction under a cap, the usage record,
and the irc-cache command (tools/cache.py) through main(argv). Damage across processes, with real
compiles: tests/cpu/test_cache_damage.py."""

import json
import logging
import os
import time

import pytest

from irc import cache, env
from irc.tools.cache import main


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh cache directory for the test, with the process switch on whatever IRC_CACHE says."""
    d = tmp_path / "irc"
    monkeypatch.setitem(cache._config, "enabled", True)
    monkeypatch.delenv("IRC_CACHE_MAX_SIZE", raising=False)
    cache.set_dir(d)
    yield d
    cache.set_dir(None)
    cache._trust.pop(os.fspath(d), None)


def _key(n: int) -> str:
    return cache.make_key("test", str(n))


def test_an_entry_reads_back_and_a_hit_touches_it(store):
    assert cache.put("obj", _key(1), b"object code")
    path = store / "obj" / _key(1)[:2] / _key(1)
    os.utime(path, (1, 1))
    assert cache.get("obj", _key(1)) == b"object code"
    assert path.stat().st_mtime > 1  # used now: the last to be evicted
    assert cache.get("obj", _key(2)) is None


@pytest.mark.parametrize("damage", ["random", "empty", "half", "wrong-key", "flipped-bit"])
def test_a_damaged_entry_is_a_miss_removed_with_a_warning(store, damage, caplog):
    cache.put_json("mem", _key(1), {"mem": "x" * 300})
    cache.put_json("mem", _key(2), {"mem": "y"})
    path = store / "mem" / _key(1)[:2] / _key(1)
    data = path.read_bytes()
    path.write_bytes(
        {
            "random": os.urandom(100),
            "empty": b"",
            "half": data[: len(data) // 2],
            "wrong-key": (store / "mem" / _key(2)[:2] / _key(2)).read_bytes(),
            "flipped-bit": data[:-1] + bytes([data[-1] ^ 1]),
        }[damage]
    )
    with caplog.at_level(logging.WARNING, logger="irc.cache"):
        assert cache.get_json("mem", _key(1)) is None
    assert not path.exists()
    (record,) = caplog.records
    assert record.name == "irc.cache" and "discarding damaged cache entry" in record.getMessage()
    assert cache.put_json("mem", _key(1), {"mem": "rebuilt"}) and cache.get_json("mem", _key(1)) == {"mem": "rebuilt"}


def test_the_cache_off_for_the_process_reads_and_writes_nothing(store, monkeypatch):
    monkeypatch.setitem(cache._config, "enabled", False)
    assert not cache.put("obj", _key(1), b"x") and cache.get("obj", _key(1)) is None
    assert not store.exists()


def _fill(n: int, size: int) -> list:
    """n entries of `size` payload bytes, the first the least recently used."""
    for i in range(n):
        cache.put("obj", _key(i), bytes(size))
    paths = [cache.cache_dir() / "obj" / _key(i)[:2] / _key(i) for i in range(n)]
    for i, p in enumerate(paths):
        os.utime(p, (1000 + i, 1000 + i))
    return paths


def test_prune_removes_the_least_recently_used_first(store):
    paths = _fill(5, 1000)
    entry = paths[0].stat().st_size
    os.utime(paths[0])  # a hit on the oldest makes it the newest
    removed, freed = cache.prune(3 * entry)
    assert (removed, freed) == (2, 2 * entry)
    assert [p.exists() for p in paths] == [True, False, False, True, True]


def test_writes_past_the_cap_evict_old_entries(store, monkeypatch):
    monkeypatch.setenv("IRC_CACHE_MAX_SIZE", "20K")
    monkeypatch.setitem(cache._written, "pruned", False)
    for i in range(40):
        cache.put("obj", _key(i), bytes(1000))
    size = sum(e.size for e in cache.entries())
    assert size <= 20 * 1024, size
    assert cache.get("obj", _key(39)) is not None  # the newest stays


def test_stale_temporaries_are_removed(store):
    cache.put("obj", _key(1), b"x")
    stale = store / "obj" / _key(1)[:2] / ".dead.tmp"
    stale.write_bytes(b"half")
    old = time.time() - 2 * cache.STALE_TMP_S
    os.utime(stale, (old, old))
    assert cache.prune(1 << 30) == (1, 4) and not stale.exists()


@pytest.mark.parametrize(
    "text, size",
    [("123", 123), ("500K", 500 << 10), ("500M", 500 << 20), ("1G", 1 << 30), ("1.5GiB", 3 << 29), ("2 mb", 2 << 20)],
)
def test_sizes(text, size):
    assert env.parse_size(text) == size


@pytest.mark.parametrize("text", ["lots", "-1M", "", "5X"])
def test_bad_sizes_say_what_is_accepted(text):
    with pytest.raises(ValueError, match="K, M, G or T suffix|not negative"):
        env.parse_size(text)


def test_usage_is_summed_over_processes(store):
    store.mkdir(parents=True)
    lines = [{"obj": [3, 1]}, {"obj": [1, 1], "mem": [0, 2]}, "not json"]
    (store / "stats.jsonl").write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in lines) + "\n")
    assert cache.usage() == {"obj": [4, 2], "mem": [0, 2]}


# -- irc-cache ------------------------------------------------------------------------------------------------
def test_info_lists_kinds_sizes_and_hit_rates(store, capsys):
    _fill(3, 100)
    cache.put_json("autotune", _key(9), {"launches": []})
    (store / "stats.jsonl").write_text(json.dumps({"obj": [3, 1]}) + "\n")
    assert main(["--dir", str(store), "info"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}  # kind, entries, size, hits, misses, rate
    assert rows["obj"][1] == "3" and rows["obj"][-3:] == ["3", "1", "75%"], out
    assert rows["autotune"][1] == "1" and rows["autotune"][-3:] == ["0", "0", "-"], out
    assert str(store) in out.splitlines()[0]


def test_prune_command_keeps_the_most_recently_used(store, capsys):
    paths = _fill(4, 1000)
    entry = paths[0].stat().st_size
    assert main(["--dir", str(store), "prune", "--max-size", str(2 * entry)]) == 0
    assert [p.exists() for p in paths] == [False, False, True, True]
    assert "removed 2 entries" in capsys.readouterr().out


def test_clear_command_removes_everything(store, capsys):
    _fill(3, 10)
    (store / "stats.jsonl").write_text(json.dumps({"obj": [1, 0]}) + "\n")
    assert main(["--dir", str(store), "clear"]) == 0
    assert not cache.entries(store) and not (store / "stats.jsonl").exists()
    assert "removed 3 entries" in capsys.readouterr().out


def test_a_bad_size_is_a_usage_error(store, capsys):
    with pytest.raises(SystemExit) as e:
        main(["--dir", str(store), "prune", "--max-size", "lots"])
    assert e.value.code == 2 and "K, M, G or T suffix" in capsys.readouterr().err
