"""A run folder as a zip file: packed from a folder in a fixed order, and unpacked from an untrusted
download without ever writing outside the target folder."""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

import msgspec

from convy_action.errors import ActionError

MIB = 1024 * 1024
CHUNK = 1024 * 1024
MOMENT = (1980, 1, 1, 0, 0, 0)
"""Every entry's time, so that one folder always packs to the same bytes."""

DRIVE = re.compile(r"^[A-Za-z]:")
ENCRYPTED = 0x1
"""Bit 0 of an entry's general-purpose flags: the entry is encrypted (it needs a password)."""

RUN_FILES = ("run.json", "attempts.jsonl", "rejudged.jsonl")
"""What reading a run back needs from its folder (rejudged.jsonl: the baseline attempts it judged
again, so a resumed re-run does not pay for them twice); the pages and the comment are written again."""

LEFT_OUT = ("run.lock",)
"""Files of a run folder never packed: the lock only means something on the machine that holds it."""

FLOOR = 64 * MIB
"""A downloaded run may always expand to this much (decision 14)."""
RATIO = 50
"""Above FLOOR, a run may expand to this many times its zip's size, never above the hard cap."""


class UnsafeArchive(ActionError):
    """A downloaded archive that is refused: entries escaping the folder, absolute paths, links,
    encrypted entries, sizes over the cap, or a corrupt zip. `reason` says which; nothing was left in
    the target."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Archive(msgspec.Struct, frozen=True):
    """A zip file at `path`. Unpacking it writes at most `max_bytes` and `max_entries` entries;
    only the entries named in `wanted` when it is not empty (the others are checked, not written)."""

    path: Path
    max_bytes: int = 512 * MIB
    max_entries: int = 10_000
    wanted: tuple[str, ...] = ()

    def run_folder(self) -> Archive:
        """This zip as a downloaded run folder: only run.json and attempts.jsonl are unpacked, to
        at most 50 times the zip's size or 64 MiB, whichever is more (never above `max_bytes`)."""
        size = self.path.stat().st_size
        cap = min(self.max_bytes, max(FLOOR, RATIO * size))
        return msgspec.structs.replace(self, max_bytes=cap, wanted=RUN_FILES)

    def __post_init__(self) -> None:
        if self.max_bytes <= 0 or self.max_entries <= 0:
            raise ValueError("an archive's limits must be positive")

    def pack(self, folder: Path) -> None:
        """Write the regular files of `folder` (links skipped) into this zip, in sorted order,
        with paths relative to the folder: its run.json is at the zip's root."""
        files = sorted(
            (
                p
                for p in folder.rglob("*")
                if p.is_file()
                and not p.is_symlink()
                and p.name not in LEFT_OUT
                and not p.name.endswith(".partial")
            ),
            key=lambda p: p.relative_to(folder).as_posix(),
        )
        with zipfile.ZipFile(self.path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zipped:
            for file in files:
                if any((folder / part).is_symlink() for part in file.relative_to(folder).parents[:-1]):
                    continue
                info = zipfile.ZipInfo(file.relative_to(folder).as_posix(), MOMENT)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = (stat.S_IFREG | 0o644) << 16
                info.file_size = file.stat().st_size
                with file.open("rb") as source, zipped.open(info, "w") as entry:
                    shutil.copyfileobj(source, entry, CHUNK)

    def unpack(self, target: Path) -> tuple[Path, ...]:
        """Extract into `target` (absent or an empty folder) and return the files written.
        Raises UnsafeArchive, after removing whatever it wrote, when the archive is refused."""
        created = not target.exists()
        target.mkdir(parents=True, exist_ok=True)
        if any(target.iterdir()):
            raise ValueError(f"{target} is not empty")
        try:
            return self._extract(target.resolve())
        except UnsafeArchive:
            self._clean(target, created)
            raise
        except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, NotImplementedError) as e:
            self._clean(target, created)
            raise UnsafeArchive(f"not a readable zip archive ({type(e).__name__})") from None
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            self._clean(target, created)
            raise UnsafeArchive("a file and a folder of the archive have the same name") from None
        except BaseException:
            self._clean(target, created)
            raise

    def _extract(self, root: Path) -> tuple[Path, ...]:
        with zipfile.ZipFile(self.path) as zipped:
            entries = zipped.infolist()
            self._check(entries)
            written: list[Path] = []
            total = 0
            for info in entries:
                if self.wanted and info.filename not in self.wanted:
                    continue
                destination = root.joinpath(*PurePosixPath(info.filename).parts)
                if not destination.resolve().is_relative_to(root):
                    raise UnsafeArchive(f"entry {info.filename!r} escapes the folder")
                if info.is_dir():
                    destination.mkdir(parents=True, exist_ok=True)
                    continue
                destination.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(info) as source, destination.open("xb") as sink:
                    while chunk := source.read(CHUNK):
                        total += len(chunk)
                        if total > self.max_bytes:
                            raise UnsafeArchive(f"the archive unpacks to more than {self._shown()}")
                        sink.write(chunk)
                written.append(destination)
            return tuple(written)

    def _check(self, entries: list[zipfile.ZipInfo]) -> None:
        """Refuse the archive on what its directory declares, before anything is written."""
        if len(entries) > self.max_entries:
            raise UnsafeArchive(f"the archive has more than {self.max_entries} entries")
        declared = sum(info.file_size for info in entries if not self.wanted or info.filename in self.wanted)
        if declared > self.max_bytes:
            raise UnsafeArchive(f"the archive declares {declared} bytes, more than {self._shown()}")
        seen: set[str] = set()
        for info in entries:
            name = info.filename
            parts = PurePosixPath(name).parts
            if not name or name.startswith("/") or DRIVE.match(name):
                raise UnsafeArchive(f"entry {name!r} has an absolute path")
            if "\\" in name or "\x00" in name:
                raise UnsafeArchive(f"entry {name!r} has a backslash or a NUL in its name")
            if ".." in parts:
                raise UnsafeArchive(f"entry {name!r} escapes the folder")
            kind = stat.S_IFMT(info.external_attr >> 16)
            if kind == stat.S_IFLNK:
                raise UnsafeArchive(f"entry {name!r} is a symbolic link")
            if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
                raise UnsafeArchive(f"entry {name!r} is not a regular file")
            if info.flag_bits & ENCRYPTED:
                raise UnsafeArchive(f"entry {name!r} is encrypted")
            if name.rstrip("/") in seen:
                raise UnsafeArchive(f"entry {name!r} appears twice")
            seen.add(name.rstrip("/"))

    def _shown(self) -> str:
        """The cap for people: bytes, and MiB when large."""
        if self.max_bytes < MIB:
            return f"{self.max_bytes} bytes"
        return f"{self.max_bytes} bytes ({self.max_bytes / MIB:.1f} MiB)"

    def _clean(self, target: Path, created: bool) -> None:
        if created:
            shutil.rmtree(target, ignore_errors=True)
            return
        for child in target.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
