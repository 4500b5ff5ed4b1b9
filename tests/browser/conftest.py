"""The browser the page tests share: one headless Chromium per module."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tests.browser.chromium import INSTALL, NAMES, Chromium


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    names = (os.environ["CHROMIUM"],) if os.environ.get("CHROMIUM") else NAMES
    executable = next(filter(None, map(shutil.which, names)), None)
    if not executable:
        pytest.fail(INSTALL)
    with Chromium(executable, tmp_path_factory.mktemp("chromium") / "profile") as chromium:
        yield chromium
