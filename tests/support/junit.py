"""A JUnit XML file validated against its schema, then read."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import junitparser
import xmlschema

SCHEMA = xmlschema.XMLSchema(Path(__file__).resolve().parent.parent / "data" / "junit" / "JUnit.xsd")


def read(path: Path) -> junitparser.TestSuite:
    """The file validated against the schema, then read with junitparser."""
    SCHEMA.validate(str(path))
    assert ElementTree.parse(path).getroot().tag == "testsuite"
    read = junitparser.JUnitXml.fromfile(str(path))
    (suite,) = list(read) if isinstance(read, junitparser.JUnitXml) else [read]
    assert isinstance(suite, junitparser.TestSuite)
    return suite
