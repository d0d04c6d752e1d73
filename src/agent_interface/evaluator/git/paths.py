"""Paths in a Git tree: how Git quotes them in a patch, which a candidate may write, and
which collide on case-insensitive file systems.

Git names are bytes. A name Git cannot print plainly is written C-style quoted
(``"a\\303\\251 b"``); :func:`unquote_c_style` undoes exactly Git's quoting and nothing
more. :func:`is_safe_tree_path` is the rule for a path a patch may create: relative,
no empty, ``.`` or ``..`` component, no NUL, and no component that a file system maps
to ``.git`` (any case, NTFS short name ``git~1``, trailing dots or spaces, HFS+
ignorable code points, NTFS stream suffixes). Backslashes, quotes, spaces, newlines and
any other bytes are legitimate in Git names and are accepted.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

_SIMPLE_ESCAPES: Final = {
    ord("a"): 7, ord("b"): 8, ord("f"): 12, ord("n"): 10, ord("r"): 13, ord("t"): 9,
    ord("v"): 11, ord("\\"): ord("\\"), ord('"'): ord('"'),
}
# Code points HFS+ ignores when it compares names (git's is_hfs_dotgit list).
_HFS_IGNORED: Final = frozenset(
    [0x200C, 0x200D, 0x200E, 0x200F, 0xFEFF, *range(0x202A, 0x202F), *range(0x206A, 0x2070)]
)
_DOTGIT_ALIASES: Final = frozenset({".git", "git~1"})


def unquote_c_style(data: bytes, start: int) -> tuple[bytes, int] | None:
    """The name quoted at ``data[start]`` (a ``"``) and the index after its closing quote.

    ``None`` when Git would refuse the quoting (an unknown escape, a bad octal escape, or
    no closing quote). Like Git, the quoted name may run past a newline.
    """
    if data[start : start + 1] != b'"':
        return None
    out = bytearray()
    index = start + 1
    end = len(data)
    while index < end:
        byte = data[index]
        if byte == 0x22:  # closing quote
            return bytes(out), index + 1
        if byte == 0:
            return None
        if byte != 0x5C:
            out.append(byte)
            index += 1
            continue
        escape = data[index + 1] if index + 1 < end else 0
        if escape in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[escape])
            index += 2
            continue
        digits = data[index + 1 : index + 4]
        if (
            len(digits) == 3
            and 0x30 <= digits[0] <= 0x33
            and all(0x30 <= digit <= 0x37 for digit in digits[1:])
        ):
            out.append(((digits[0] - 0x30) << 6) | ((digits[1] - 0x30) << 3) | (digits[2] - 0x30))
            index += 4
            continue
        return None
    return None


def _is_dotgit_alias(component: bytes) -> bool:
    text = component.decode("utf-8", "surrogateescape")
    text = "".join(char for char in text if ord(char) not in _HFS_IGNORED)
    folded = text.casefold()
    stem = folded.split(":", 1)[0] if ":" in folded else folded
    return stem.rstrip(" .") in _DOTGIT_ALIASES


def is_safe_tree_path(path: bytes) -> bool:
    """Whether a patch may create ``path`` in a tree (see the module docstring)."""
    if not path or path.startswith(b"/") or b"\0" in path:
        return False
    return all(
        part not in (b"", b".", b"..") and not _is_dotgit_alias(part) for part in path.split(b"/")
    )


def collision_key(path: bytes) -> str:
    """``path`` as a case-insensitive, normalization-insensitive file system compares it."""
    if path.isascii():
        return path.lower().decode("ascii")  # casefold and NFC agree with lower() on ASCII
    text = unicodedata.normalize("NFC", path.decode("utf-8", "surrogateescape"))
    return unicodedata.normalize("NFC", text.casefold())
