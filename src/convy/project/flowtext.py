"""A setting's value written as JSON or as YAML's flow style (`{gpt-4o-mini: {input: 0.15}}`: YAML is
a superset, so keys need no quotes), read into plain data; YAML is loaded only when JSON fails."""

from __future__ import annotations

import msgspec

from convy.errors import ConfigurationError


class FlowText(msgspec.Struct, frozen=True):
    """A setting's text, JSON or YAML flow."""

    text: str

    def value(self, where: str) -> object:
        """The data it holds; ConfigurationError naming `where` when it is neither."""
        try:
            return msgspec.json.decode(self.text)
        except msgspec.DecodeError as error:
            import yaml

            from convy.project.document import LOADER

            try:
                return yaml.load(self.text, Loader=LOADER)  # noqa: S506 (a safe loader: libyaml's, else PyYAML's)
            except yaml.YAMLError:
                raise ConfigurationError(where, f"is not JSON or YAML flow text: {error}") from None
