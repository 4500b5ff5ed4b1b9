"""GITHUB_OUTPUT as the runner reads it."""

from __future__ import annotations


def read_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: `name=value` or `name<<DELIMITER` … `DELIMITER`."""
    values: dict[str, str] = {}
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            kept = []
            for value_line in lines:
                if value_line == delimiter:
                    break
                kept.append(value_line)
            else:
                raise AssertionError("Matching delimiter not found")
            values[name] = "\n".join(kept)
        else:
            name, value = line.split("=", 1)
            values[name] = value
    return values
