"""Archive: packing a run folder in a fixed order, and unpacking untrusted zips without ever
writing outside the target."""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from pathlib import Path

import pytest

from convy_action.github.zipped import Archive, UnsafeArchive
from tests.support.zips import encrypting


def folder(root: Path) -> Path:
    (root / "logs").mkdir(parents=True)
    (root / "run.json").write_text('{"format": 1}')
    (root / "attempts.jsonl").write_text('{"scenario": "a"}\n' * 50)
    (root / "logs" / "b.txt").write_bytes(os.urandom(3000))
    (root / "logs" / "a.txt").write_text("a")
    return root


def crafted(path: Path, *entries: tuple[zipfile.ZipInfo | str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zipped:
        for info, data in entries:
            zipped.writestr(info, data)
    return path


def declaring(path: Path, size: int) -> None:
    """Overwrite the uncompressed size of the first entry in the zip's central directory."""
    data = bytearray(path.read_bytes())
    at = data.index(b"PK\x01\x02")
    data[at + 24 : at + 28] = struct.pack("<I", size)
    path.write_bytes(bytes(data))


def everything(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_a_folder_packs_in_sorted_order_with_run_json_at_the_root(tmp_path: Path) -> None:
    source = folder(tmp_path / "run")
    Archive(tmp_path / "a.zip").pack(source)
    with zipfile.ZipFile(tmp_path / "a.zip") as zipped:
        assert zipped.namelist() == ["attempts.jsonl", "logs/a.txt", "logs/b.txt", "run.json"]
        assert zipped.read("run.json") == b'{"format": 1}'


def test_packing_the_same_folder_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    source = folder(tmp_path / "run")
    Archive(tmp_path / "one.zip").pack(source)
    os.utime(source / "run.json", (1_000_000, 1_000_000))
    Archive(tmp_path / "two.zip").pack(source)
    assert (tmp_path / "one.zip").read_bytes() == (tmp_path / "two.zip").read_bytes()


def test_links_in_the_folder_are_not_packed(tmp_path: Path) -> None:
    source = folder(tmp_path / "run")
    (tmp_path / "secret.txt").write_text("secret")
    (source / "leak.txt").symlink_to(tmp_path / "secret.txt")
    (source / "leakdir").symlink_to(tmp_path)
    Archive(tmp_path / "a.zip").pack(source)
    with zipfile.ZipFile(tmp_path / "a.zip") as zipped:
        assert not any("leak" in name for name in zipped.namelist())


def test_a_packed_folder_unpacks_to_the_same_files(tmp_path: Path) -> None:
    source = folder(tmp_path / "run")
    Archive(tmp_path / "a.zip").pack(source)
    written = Archive(tmp_path / "a.zip").unpack(tmp_path / "out")
    assert len(written) == 4
    for name in ("run.json", "attempts.jsonl", "logs/a.txt", "logs/b.txt"):
        assert (tmp_path / "out" / name).read_bytes() == (source / name).read_bytes()


def refused(tmp_path: Path, archive: Path, says: str, max_bytes: int = 512 * 1024 * 1024) -> None:
    """Unpacking `archive` is refused with a reason containing `says`, and the sandbox around the
    target holds nothing but the archive afterwards."""
    box = tmp_path / "box"
    with pytest.raises(UnsafeArchive) as refusal:
        Archive(archive, max_bytes=max_bytes).unpack(box / "target")
    assert says in refusal.value.reason
    assert everything(box) == set()
    assert everything(tmp_path) == {archive.name, "box"}


@pytest.mark.parametrize("name", ["../evil.txt", "ok/../../evil.txt", "a/../../../evil.txt"])
def test_an_entry_climbing_out_is_refused(tmp_path: Path, name: str) -> None:
    archive = crafted(tmp_path / "a.zip", ("run.json", b"{}"), (zipfile.ZipInfo(name), b"evil"))
    refused(tmp_path, archive, "escapes")


def test_an_absolute_path_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "abs-evil.txt"
    archive = crafted(tmp_path / "a.zip", (zipfile.ZipInfo(str(outside)), b"evil"))
    refused(tmp_path, archive, "absolute")
    assert not outside.exists()


@pytest.mark.parametrize("name", ["C:/evil.txt", "c:evil.txt"])
def test_a_drive_letter_is_refused(tmp_path: Path, name: str) -> None:
    refused(tmp_path, crafted(tmp_path / "a.zip", (zipfile.ZipInfo(name), b"evil")), "absolute")


def test_a_backslash_name_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, crafted(tmp_path / "a.zip", (zipfile.ZipInfo("..\\evil.txt"), b"evil")), "backslash")


def test_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    link = zipfile.ZipInfo("run.json")
    link.external_attr = (stat.S_IFLNK | 0o777) << 16
    archive = crafted(tmp_path / "a.zip", ("attempts.jsonl", b"x"), (link, b"/etc/passwd"))
    refused(tmp_path, archive, "symbolic link")


def test_a_device_entry_is_refused(tmp_path: Path) -> None:
    fifo = zipfile.ZipInfo("pipe")
    fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    refused(tmp_path, crafted(tmp_path / "a.zip", (fifo, b"")), "not a regular file")


def test_an_encrypted_entry_is_refused_before_writing(tmp_path: Path) -> None:
    plain = crafted(tmp_path / "plain.zip", ("run.json", b"{}"), ("attempts.jsonl", b"{}\n"))
    archive = tmp_path / "a.zip"
    archive.write_bytes(encrypting(plain.read_bytes()))
    plain.unlink()
    with zipfile.ZipFile(archive) as zipped:
        assert all(info.flag_bits & 0x1 for info in zipped.infolist())
    refused(tmp_path, archive, "entry 'run.json' is encrypted")


def test_a_declared_size_of_two_gigabytes_is_refused_before_writing(tmp_path: Path) -> None:
    archive = crafted(tmp_path / "a.zip", ("run.json", b"{}" * 100))
    declaring(archive, 2 * 1024**3)
    with zipfile.ZipFile(archive) as zipped:
        assert zipped.infolist()[0].file_size == 2 * 1024**3
    refused(tmp_path, archive, "declares 2147483648 bytes")


def test_many_entries_of_a_total_over_the_cap_are_refused(tmp_path: Path) -> None:
    entries = [(f"f{i}.txt", b"x" * 400) for i in range(10)]
    refused(tmp_path, crafted(tmp_path / "a.zip", *entries), "more than 1000", max_bytes=1000)


def test_a_header_understating_the_size_is_refused(tmp_path: Path) -> None:
    archive = crafted(tmp_path / "a.zip", ("run.json", b"a" * 5000))
    declaring(archive, 10)
    refused(tmp_path, archive, "not a readable zip")


def test_too_many_entries_are_refused(tmp_path: Path) -> None:
    archive = crafted(tmp_path / "a.zip", *[(f"f{i}", b"") for i in range(11)])
    with pytest.raises(UnsafeArchive, match="more than 10 entries"):
        Archive(archive, max_entries=10).unpack(tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_name_used_twice_is_refused(tmp_path: Path) -> None:
    archive = crafted(tmp_path / "a.zip", ("run.json", b"{}"), ("run.json/", b""))
    refused(tmp_path, archive, "twice")


def test_garbage_is_not_a_zip(tmp_path: Path) -> None:
    archive = tmp_path / "a.zip"
    archive.write_bytes(b"<html>not a zip</html>")
    refused(tmp_path, archive, "not a readable zip")


def test_a_refusal_empties_a_target_that_existed_and_keeps_it(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    archive = crafted(tmp_path / "a.zip", ("run.json", b"{}"), ("big", b"x" * 2000))
    with pytest.raises(UnsafeArchive):
        Archive(archive, max_bytes=1000).unpack(target)
    assert target.is_dir() and everything(target) == set()


def test_a_target_with_files_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "mine.txt").write_text("keep me")
    archive = crafted(tmp_path / "a.zip", ("run.json", b"{}"))
    with pytest.raises(ValueError, match="not empty"):
        Archive(archive).unpack(tmp_path / "target")
    assert (tmp_path / "target" / "mine.txt").read_text() == "keep me"


def test_limits_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Archive(tmp_path / "a.zip", max_bytes=0)


def test_run_lock_and_partial_files_are_never_packed(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    for name in ("run.json", "attempts.jsonl", "run.lock", ".report.html.x1y2.partial", "report.html"):
        (folder / name).write_text(name)
    Archive(tmp_path / "a.zip").pack(folder)
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        assert archive.namelist() == ["attempts.jsonl", "report.html", "run.json"]


def test_a_run_folder_zip_is_capped_at_64_mib_or_fifty_times_its_size(tmp_path: Path) -> None:
    small = tmp_path / "small.zip"
    small.write_bytes(b"x" * 1000)
    assert Archive(small).run_folder().max_bytes == 64 * 1024 * 1024
    big = tmp_path / "big.zip"
    with big.open("wb") as stream:
        stream.truncate(3 * 1024 * 1024)
    assert Archive(big).run_folder().max_bytes == 150 * 1024 * 1024
    assert Archive(big, max_bytes=100).run_folder().max_bytes == 100, "never above the archive's own cap"


def test_a_downloaded_run_folder_keeps_its_rejudged_attempts_and_leaves_the_pages(tmp_path: Path) -> None:
    root = folder(tmp_path / "run")
    (root / "rejudged.jsonl").write_text('{"baseline": "a@b"}\n')
    (root / "report.html").write_text("<html></html>")
    archive = Archive(tmp_path / "run.zip")
    archive.pack(root)
    archive.run_folder().unpack(tmp_path / "down")
    assert sorted(p.name for p in (tmp_path / "down").iterdir()) == [
        "attempts.jsonl",
        "rejudged.jsonl",
        "run.json",
    ]
