"""SPDX expressions read as spdx-expression-parse 5.0.0 reads them (spec: "validated SPDX
expression or content-pinned custom license")."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from agent_interface.candidate.spdx import (
    SPDX_DATA_VERSIONS,
    SpdxConjunction,
    SpdxLicense,
    is_spdx_expression,
    parse_spdx_expression,
    spdx_exception_ids,
    spdx_license_ids,
)
from agent_interface.core.errors import ContractError


def test_pinned_lists_ship_with_their_versions() -> None:
    data = json.loads(
        resources.files("agent_interface.candidate").joinpath("spdx_ids.json").read_text("utf-8")
    )
    assert data["spdx-license-ids"]["version"] == SPDX_DATA_VERSIONS["spdx-license-ids"] == "3.0.24"
    assert data["spdx-exceptions"]["version"] == SPDX_DATA_VERSIONS["spdx-exceptions"] == "2.5.0"
    assert len(spdx_license_ids()) == 708 + 26
    assert len(spdx_exception_ids()) == 66
    # The parser reads only the current exception list, not the deprecated one.
    assert "Nokia-Qt-exception-1.1" not in spdx_exception_ids()


@pytest.mark.parametrize(
    "expression",
    [
        "MIT",
        "GPL-2.0+",
        "GPL-2.0",
        "MIT or Apache-2.0",
        "MIT AND (Apache-2.0 OR BSD-3-Clause)",
        "Apache-2.0 WITH LLVM-exception",
        "GPL-2.0-only with Classpath-exception-2.0",
        "() MIT",
        "MIT oR Zlib",
    ],
)
def test_accepted(expression: str) -> None:
    assert is_spdx_expression(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "mit",
        "Mit",
        "LicenseRef-internal",
        "DocumentRef-spdx:LicenseRef-internal",
        "MIT OR LicenseRef-x",
        "MIT +",
        "MIT AND",
        "(MIT",
        "MIT\tOR Zlib",
        "MIT Zlib",
        "MIT WITH Zlib",
        "Apache-2.0 WITH Nokia-Qt-exception-1.1",
        "",
        "()",
        "MIT WıTH LLVM-exception",
    ],
)
def test_refused(expression: str) -> None:
    assert not is_spdx_expression(expression)


def test_tree_and_precedence() -> None:
    tree = parse_spdx_expression("MIT OR GPL-2.0+ AND Zlib WITH LLVM-exception")
    assert tree == SpdxConjunction(
        SpdxLicense("MIT"),
        "or",
        SpdxConjunction(
            SpdxLicense("GPL-2.0", plus=True), "and", SpdxLicense("Zlib", exception="LLVM-exception")
        ),
    )


def test_syntax_error_is_a_contract_error() -> None:
    with pytest.raises(ContractError) as caught:
        parse_spdx_expression("MIT AND")
    assert caught.value.issues[0].code == "spdx_syntax"
