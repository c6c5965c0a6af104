"""pairaudit.cache: the one place that writes into the model cache (temp + rename, nothing left behind).
The real full-disk cases (a tmpfs as PAIRAUDIT_CACHE) are in test_hostile_input.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairaudit import cache


def _entries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(tmp_path / "cache"))
    cache.start_scan()


def test_an_entry_is_written_whole_under_its_name(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "tokenizers"

    def write(tmp: Path) -> None:
        tmp.mkdir()
        (tmp / "tokenizer.json").write_text("{}")

    assert cache.cache_write(folder, write, name="abc", what="a tokenizer") == folder / "abc"
    assert _entries(folder) == ["abc"] and _entries(folder / "abc") == ["tokenizer.json"]
    assert cache.cache_report() is None


def test_an_entry_another_process_wrote_first_is_used_and_ours_removed(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "tokenizers"
    (folder / "abc").mkdir(parents=True)
    (folder / "abc" / "theirs").write_text("1")
    got = cache.cache_write(folder, lambda tmp: (tmp.mkdir(), (tmp / "ours").write_text("2")), name=lambda t: "abc",
                            what="a tokenizer")
    assert got == folder / "abc" and _entries(folder) == ["abc"] and _entries(folder / "abc") == ["theirs"]


def test_a_bug_in_the_writer_is_raised_and_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "embeddings"

    def broken(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise ValueError("a bug, not the disk")

    with pytest.raises(ValueError, match="a bug"):
        cache.cache_write(folder, broken, name="x.npy", what="embedding vectors")
    assert _entries(folder) == [] and cache.cache_report() is None  # not taken for a cache failure


def test_ctrl_c_while_writing_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "cache" / "embeddings"

    def interrupted(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cache.cache_write(folder, interrupted, name="x.npy", what="embedding vectors")
    assert _entries(folder) == []


def test_a_cache_that_is_not_a_folder_degrades_once_and_says_how_to_fix_it(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache should be")
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(blocker))
    logs: list[str] = []
    cache.start_scan(logs.append)
    calls: list[Path] = []
    for what in ("a tokenizer", "embedding vectors", "embedding vectors"):
        assert cache.cache_write(blocker / "sub", calls.append, name="x", what=what) is None
    report = cache.cache_report()
    assert calls == [] and len(logs) == 1 and "could not write a tokenizer" in logs[0]
    assert report is not None and report["folder"] == str(blocker) and "[ENOTDIR]" in report["error"]
    assert report["uncached"] == ["a tokenizer", "embedding vectors"] and "PAIRAUDIT_CACHE" in report["fix"]
    with pytest.raises(cache.FileSystemError) as err:  # an entry the scan needs: exit 2, and the fix
        cache.cache_write(blocker / "sub", calls.append, name="x", what="the tokenizer object", required=True,
                          otherwise="or pass its folder")
    assert err.value.exit_code == 2 and "PAIRAUDIT_CACHE" in err.value.fix and "or pass its folder" in err.value.fix
    cache.start_scan()  # the next scan tries again (the user may have fixed it)
    monkeypatch.setenv("PAIRAUDIT_CACHE", str(tmp_path / "fixed"))
    assert cache.cache_write(tmp_path / "fixed", lambda t: t.write_text("ok"), name="x", what="a tokenizer")
    assert cache.cache_report() is None


def test_a_worker_of_a_scan_whose_cache_failed_does_not_retry(tmp_path: Path) -> None:
    logs: list[str] = []
    cache.start_scan(logs.append, off=True)
    calls: list[Path] = []
    assert cache.cache_write(tmp_path / "cache", calls.append, name="x", what="a tokenizer") is None
    assert calls == [] and logs == [] and not (tmp_path / "cache").exists()
