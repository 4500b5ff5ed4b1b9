"""Zip archives made to be refused."""

from __future__ import annotations

import io
import zipfile


def encrypting(data: bytes) -> bytes:
    """The zip `data` with every entry marked encrypted (bit 0 of the general-purpose flags, in its
    local header and in the central directory), as a zip made with a password says."""
    marked = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as zipped:
        for info in zipped.infolist():
            marked[info.header_offset + 6] |= 0x1
    at = marked.find(b"PK\x01\x02")
    while at >= 0:
        marked[at + 8] |= 0x1
        at = marked.find(b"PK\x01\x02", at + 46)
    return bytes(marked)
