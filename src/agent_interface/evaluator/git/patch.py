"""Read a candidate's Git patch the way ``git apply`` reads it, before ``git`` sees it.

Two passes over the bytes, neither of which runs anything:

* :func:`binary_gate` finds every hunk ``git apply`` would inflate: after each line that
  is exactly ``GIT binary patch``, a forward and an optional reverse hunk headed
  ``literal N`` or ``delta N``. ``N`` is read as Git reads it (``strtoul``: leading
  white space, a sign, saturation), and for a delta the result size in the delta's own
  header is inflated (at most 32 bytes of output) and read too. Git allocates exactly
  these sizes, so capping them caps what ``git`` can allocate for the patch.
* :func:`patch_names` follows Git's structure: file headers (``diff --git`` with its
  extended header lines, or a ``---``/``+++``/``@@`` traditional header), hunks consumed
  by their declared line counts (so a hunk line ``+++ x`` or ``--- x`` is content, not a
  header), binary sections skipped whole, and names unquoted exactly as Git quotes them.
  It returns every name Git would read, including names of headers Git would then reject.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from dataclasses import dataclass, field
from typing import Final

from agent_interface.evaluator.git.errors import GitTreeRefused
from agent_interface.evaluator.git.limits import GitLimits
from agent_interface.evaluator.git.paths import unquote_c_style

__all__: list[str] = []  # verifier machinery: not re-exported from the package root

_BINARY_MARKER: Final = b"GIT binary patch\n"
_ULONG_MAX: Final = (1 << 64) - 1
_C_SPACE: Final = frozenset(b" \t\n\v\f\r")
_TERM_SPACE, _TERM_TAB = 1, 2


def _line_end(data: bytes, pos: int) -> int:
    found = data.find(b"\n", pos)
    return len(data) if found < 0 else found + 1


# -- binary hunks ---------------------------------------------------------------------


def _strtoul(data: bytes, pos: int) -> int:
    """C ``strtoul(data + pos, NULL, 10)`` on a 64-bit platform."""
    end = len(data)
    while pos < end and data[pos] in _C_SPACE:
        pos += 1
    negative = False
    if pos < end and data[pos] in b"+-":
        negative = data[pos] == 0x2D
        pos += 1
    start = pos
    while pos < end and 0x30 <= data[pos] <= 0x39 and pos - start <= 21:
        pos += 1
    if pos == start:
        return 0
    if pos - start > 21 or (pos < end and 0x30 <= data[pos] <= 0x39):
        return _ULONG_MAX  # more digits than fit: ERANGE
    value = int(data[start:pos])
    if value > _ULONG_MAX:
        return _ULONG_MAX
    return (-value) & _ULONG_MAX if negative else value


def _corrupt(what: str) -> GitTreeRefused:
    return GitTreeRefused("patch_binary_corrupt", f"a binary hunk of the patch is corrupt ({what})")


def _delta_result_size(data: bytes, pos: int) -> int:
    """The result size a binary delta hunk declares; its data lines start at ``pos``."""
    inflater = zlib.decompressobj()
    header = bytearray()
    while len(header) < 20:
        end = _line_end(data, pos)
        line = data[pos:end]
        if len(line) <= 1:
            break
        if len(line) < 7 or (len(line) - 2) % 5 or line[-1:] != b"\n":
            raise _corrupt("a data line has the wrong length")
        marker = line[0]
        if 0x41 <= marker <= 0x5A:
            count = marker - 0x41 + 1
        elif 0x61 <= marker <= 0x7A:
            count = marker - 0x61 + 27
        else:
            raise _corrupt("a data line has no length byte")
        most = (len(line) - 2) // 5 * 4
        if not most - 4 < count <= most:
            raise _corrupt("a data line has the wrong length")
        try:
            chunk = base64.b85decode(line[1:-1])[:count]
            header += inflater.decompress(inflater.unconsumed_tail + chunk, 32 - len(header))
        except (ValueError, binascii.Error, zlib.error):
            raise _corrupt("the data is not base85 zlib") from None
        pos = end
    sizes: list[int] = []
    index = 0
    for _ in range(2):
        value, shift = 0, 0
        while True:
            if index >= len(header) or shift > 63:
                raise _corrupt("the delta header cannot be read")
            byte = header[index]
            index += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        sizes.append(value & _ULONG_MAX)
    return sizes[1]


def binary_gate(patch: bytes, limits: GitLimits) -> int:
    """Refuse a patch whose binary hunks exceed ``limits``; the bytes they decode to.

    Refusals: ``patch_too_large`` (the patch itself), ``patch_binary_too_large`` (one
    hunk or delta result above ``max_blob_bytes``, or all of them above
    ``max_binary_bytes``), ``patch_binary_corrupt`` (a delta whose header cannot be read).
    """
    if len(patch) > limits.max_patch_bytes:
        raise GitTreeRefused(
            "patch_too_large", f"the patch is larger than {limits.max_patch_bytes} bytes"
        )
    total = 0
    search = 0
    while True:
        found = patch.find(_BINARY_MARKER, search)
        if found < 0:
            return total
        search = found + 1
        if found and patch[found - 1] != 0x0A:
            continue
        pos = found + len(_BINARY_MARKER)
        for forward in (True, False):
            if patch.startswith(b"literal ", pos):
                declared, delta = _strtoul(patch, pos + 8), False
            elif patch.startswith(b"delta ", pos):
                declared, delta = _strtoul(patch, pos + 6), True
            else:
                break
            data = _line_end(patch, pos)
            sizes = [declared]
            if declared <= limits.max_blob_bytes and delta and forward:
                sizes.append(_delta_result_size(patch, data))
            for size in sizes:
                total += size
                if size > limits.max_blob_bytes:
                    raise GitTreeRefused(
                        "patch_binary_too_large",
                        f"a binary hunk decodes to more than {limits.max_blob_bytes} bytes",
                    )
            if total > limits.max_binary_bytes:
                raise GitTreeRefused(
                    "patch_binary_too_large",
                    f"the binary hunks decode to more than {limits.max_binary_bytes} bytes",
                )
            blank = patch.find(b"\n\n", data - 1)
            if blank < 0:
                break
            pos = blank + 2


# -- file names -------------------------------------------------------------------------


@dataclass
class PatchNames:
    """Every file name the patch's headers give, in order (``names``), and whether Git can
    read the whole structure (``complete``; ``False`` means ``git apply`` will refuse it)."""

    names: list[bytes] = field(default_factory=list)
    complete: bool = True


class _Unreadable(Exception):
    """Git stops reading the patch here (and will refuse it)."""


def _squash(name: bytes) -> bytes:
    while b"//" in name:
        name = name.replace(b"//", b"/")
    return name


def _skip_tree_prefix(p_value: int, name: bytes) -> int | None:
    if not p_value:
        return None if name[:1] == b"/" else 0
    slashes = p_value
    for index, byte in enumerate(name):
        if byte == 0x2F:
            slashes -= 1
            if slashes <= 0:
                return None if index == 0 else index + 1
    return None


def _name_gnu(data: bytes, pos: int, p_value: int) -> bytes | None:
    unquoted = unquote_c_style(data, pos)
    if unquoted is None:
        return None
    name = unquoted[0]
    start = 0
    for _ in range(p_value):
        slash = name.find(b"/", start)
        if slash < 0:
            return None
        start = slash + 1
    return _squash(name[start:])


def _name_common(
    data: bytes, pos: int, default: bytes | None, p_value: int, terminate: int
) -> bytes | None:
    start = pos if p_value == 0 else None
    index = pos
    end = len(data)
    while index < end:
        byte = data[index]
        if byte in _C_SPACE:
            if byte == 0x0A:
                break
            if not (byte == 0x20 and not terminate & _TERM_SPACE) and not (
                byte == 0x09 and not terminate & _TERM_TAB
            ):
                break
        index += 1
        if byte == 0x2F:
            p_value -= 1
            if p_value == 0:
                start = index
    if start is None or index == start:
        return None if default is None else _squash(default)
    name = data[start:index]
    if default is not None and len(default) < len(name) and name.startswith(default):
        return _squash(default)
    return _squash(name)


def _find_name(data: bytes, pos: int, default: bytes | None, p_value: int, terminate: int) -> bytes | None:
    if data[pos : pos + 1] == b'"':
        name = _name_gnu(data, pos, p_value)
        if name is not None:
            return name
    return _name_common(data, pos, default, p_value, terminate)


def _header_name(data: bytes, pos: int, end: int, p_value: int) -> bytes | None:
    """The name a ``diff --git`` line gives when both sides name the same file."""
    line = pos + len(b"diff --git ")
    if data[line : line + 1] == b'"':
        unquoted = unquote_c_style(data, line)
        if unquoted is None:
            return None
        first, second = unquoted
        cut = _skip_tree_prefix(p_value, first)
        if cut is None:
            return None
        first = first[cut:]
        while second < end and data[second] in _C_SPACE:
            second += 1
        if second >= end:
            return None
        if data[second] == 0x22:
            other = unquote_c_style(data, second)
            if other is None:
                return None
            cut = _skip_tree_prefix(p_value, other[0])
            return first if cut is not None and other[0][cut:] == first else None
        tail = data[second:end]
        cut = _skip_tree_prefix(p_value, tail)
        return first if cut is not None and tail[cut:] == first else None
    rest = data[line:end]
    cut = _skip_tree_prefix(p_value, rest)
    if cut is None:
        return None
    name = rest[cut:]
    quote = name.find(b'"')
    if quote >= 0:
        other = unquote_c_style(data, line + cut + quote)
        if other is None:
            return None
        inner = _skip_tree_prefix(p_value, other[0])
        if inner is None:
            return None
        found = other[0][inner:]
        size = len(found)
        if size < quote and name.startswith(found) and name[size] in _C_SPACE:
            return found
        return None
    newline = name.find(b"\n")
    if newline < 0:
        return None
    for size in range(newline):
        if name[size] not in b" \t":
            continue
        following = name[size + 1 : newline]
        cut = _skip_tree_prefix(p_value, following)
        if cut is None:
            continue
        candidate = following[cut:]
        if len(candidate) == size and candidate == name[:size]:
            return name[:size]
    return None


_OLD_NAMES: Final = (b"copy from ", b"rename old ", b"rename from ")
_NEW_NAMES: Final = (b"copy to ", b"rename new ", b"rename to ")
_IGNORED: Final = (b"similarity index ", b"dissimilarity index ", b"index ")


def _mode(data: bytes, pos: int) -> int:
    """C ``strtoul(data + pos, &end, 8)``, refused unless white space follows the digits."""
    end = len(data)
    while pos < end and data[pos] in _C_SPACE:
        pos += 1
    negative = pos < end and data[pos] == 0x2D
    if pos < end and data[pos] in b"+-":
        pos += 1
    start = pos
    while pos < end and 0x30 <= data[pos] <= 0x37:
        pos += 1
    if pos == start or pos >= end or data[pos] not in _C_SPACE:
        raise _Unreadable
    value = int(data[start:pos], 8)
    return -value if negative else value


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.p_value = 1
        self.p_known = False
        self.result = PatchNames()

    def note(self, name: bytes | None) -> bytes | None:
        if name is not None:
            self.result.names.append(name)
        return name

    def git_header(self, pos: int, end: int) -> tuple[int, bool, bool]:
        """Parse a ``diff --git`` header; its end, and whether it creates / deletes."""
        data = self.data
        default = self.note(_header_name(data, pos, end, self.p_value))
        old: bytes | None = None
        new: bytes | None = None
        is_new = is_delete = renamed = copied = False
        modes = [0, 0]
        cursor = end
        while cursor < len(data):
            line_end = _line_end(data, cursor)
            if data[line_end - 1] != 0x0A:
                break
            if data.startswith(b"@@ -", cursor):
                break
            if data.startswith(b"--- ", cursor) or data.startswith(b"+++ ", cursor):
                is_old = data.startswith(b"--- ", cursor)
                current, null = (old, is_new) if is_old else (new, is_delete)
                if current is None and not null:
                    current = self.note(_find_name(data, cursor + 4, None, self.p_value, _TERM_TAB))
                elif current is not None:
                    if null:
                        raise _Unreadable
                    other = self.note(_find_name(data, cursor + 4, None, self.p_value, _TERM_TAB))
                    if other != current:
                        raise _Unreadable
                elif not _is_dev_null(data, cursor + 4):
                    raise _Unreadable
                old, new = (current, new) if is_old else (old, current)
            elif data.startswith((b"old mode ", b"new mode "), cursor):
                modes[data.startswith(b"new", cursor)] = _mode(data, cursor + 9)
            elif data.startswith(b"deleted file mode ", cursor):
                is_delete, old = True, default
                modes[0] = _mode(data, cursor + 18)
            elif data.startswith(b"new file mode ", cursor):
                is_new, new = True, default
                modes[1] = _mode(data, cursor + 14)
            elif data.startswith(_OLD_NAMES + _NEW_NAMES, cursor):
                prefix = next(p for p in _OLD_NAMES + _NEW_NAMES if data.startswith(p, cursor))
                name = self.note(
                    _find_name(data, cursor + len(prefix), None, max(self.p_value - 1, 0), 0)
                )
                copied = copied or prefix.startswith(b"copy")
                renamed = renamed or prefix.startswith(b"rename")
                old, new = (name, new) if prefix in _OLD_NAMES else (old, name)
            elif not data.startswith(_IGNORED, cursor):
                break
            if is_delete + is_new + renamed + copied > 1:
                raise _Unreadable
            cursor = line_end
        if old is None and new is None:
            if default is None:
                raise _Unreadable
            old = new = default
        if (new is None and not is_delete) or (old is None and not is_new):
            raise _Unreadable
        mode_change = bool(modes[0] and modes[1] and modes[0] != modes[1])
        return cursor, is_new or is_delete or renamed or copied or mode_change, is_new

    def traditional(self, first: int, second: int) -> None:
        data = self.data
        if not self.p_known:
            guesses = [self.guess_p_value(first), self.guess_p_value(second)]
            if guesses[0] < 0:
                guesses[0] = guesses[1]
            if 0 <= guesses[0] == guesses[1]:
                self.p_value, self.p_known = guesses[0], True
        if _is_dev_null(data, first):
            names = [_name_traditional(data, second, None, self.p_value)]
        elif _is_dev_null(data, second):
            names = [_name_traditional(data, first, None, self.p_value)]
        else:
            first_name = self.note(_name_traditional(data, first, None, self.p_value))
            names = [_name_traditional(data, second, first_name, self.p_value)]
        if self.note(names[0]) is None:
            raise _Unreadable

    def guess_p_value(self, pos: int) -> int:
        if _is_dev_null(self.data, pos):
            return -1
        name = _name_traditional(self.data, pos, None, 0)
        if name is None:
            return -1
        return -1 if b"/" in name else 0

    def find_header(self, pos: int) -> tuple[int, bool, bool] | None:
        """The next file header from ``pos``: where its body starts, whether it changes
        metadata, and whether it creates the file; ``None`` when no header is left."""
        data = self.data
        while pos < len(data):
            end = _line_end(data, pos)
            size = len(data) - pos
            if end - pos < 6:
                pos = end
                continue
            if data.startswith(b"@@ -", pos) and _hunk_counts(data, pos, end) is not None:
                raise _Unreadable  # a hunk without a file header
            if size < end - pos + 6:
                return None
            if data.startswith(b"diff --git ", pos):
                header_end, metadata, creates = self.git_header(pos, end)
                if header_end > end:
                    return header_end, metadata, creates
                pos = end
                continue
            if data.startswith(b"--- ", pos) and data.startswith(b"+++ ", end):
                next_end = _line_end(data, end)
                if size >= (next_end - end) + 14 and data.startswith(b"@@ -", next_end):
                    self.traditional(pos + 4, end + 4)
                    return next_end, False, False
            pos = end
        return None

    def read(self) -> PatchNames:
        data = self.data
        pos = 0
        try:
            while True:
                found = self.find_header(pos)
                if found is None:
                    break
                pos, metadata, creates = found
                hunks = 0
                while len(data) - pos > 4 and data.startswith(b"@@ -", pos):
                    pos = _skip_hunk(data, pos, creates)
                    hunks += 1
                if hunks:
                    continue
                line_end = _line_end(data, pos)
                if data[pos:line_end] == _BINARY_MARKER:
                    pos = _skip_binary(data, line_end)
                elif data[pos:line_end].endswith(b" differ\n") and data.startswith(
                    (b"Binary files ", b"Files "), pos
                ):
                    pos = line_end
                elif not metadata:
                    raise _Unreadable  # a header with nothing to apply
        except _Unreadable:
            self.result.complete = False
        return self.result


def _is_dev_null(data: bytes, pos: int) -> bool:
    return data.startswith(b"/dev/null", pos) and data[pos + 9 : pos + 10] in (
        b" ", b"\t", b"\n", b"\v", b"\f", b"\r",
    )


def _name_traditional(data: bytes, pos: int, default: bytes | None, p_value: int) -> bytes | None:
    # Git also strips a trailing timestamp written without a tab; the name before it is
    # what matters here, and a timestamp never carries a path component.
    if data[pos : pos + 1] == b'"':
        name = _name_gnu(data, pos, p_value)
        if name is not None:
            return name
    return _name_common(data, pos, default, p_value, _TERM_TAB)


def _number(line: bytes, pos: int) -> tuple[int, int] | None:
    start = pos
    while pos < len(line) and 0x30 <= line[pos] <= 0x39:
        pos += 1
    if pos == start:
        return None
    return min(int(line[start:pos]), _ULONG_MAX), pos


def _range(line: bytes, pos: int, expect: bytes) -> tuple[int, int] | None:
    first = _number(line, pos)
    if first is None:
        return None
    count, pos = 1, first[1]
    if line[pos : pos + 1] == b",":
        second = _number(line, pos + 1)
        if second is None:
            return None
        count, pos = second
    return (count, pos + len(expect)) if line.startswith(expect, pos) else None


def _hunk_counts(data: bytes, pos: int, end: int) -> tuple[int, int] | None:
    """The old and new line counts of a hunk header line ``@@ -a,b +c,d @@``."""
    line = data[pos:end]
    if not line.endswith(b"\n"):
        return None
    old = _range(line, 4, b" +")
    if old is None:
        return None
    new = _range(line, old[1], b" @@")
    return None if new is None else (old[0], new[0])


def _skip_hunk(data: bytes, pos: int, creates: bool) -> int:
    """Consume one hunk by its declared line counts; where the next line starts."""
    end = _line_end(data, pos)
    counts = _hunk_counts(data, pos, end)
    if counts is None:
        raise _Unreadable
    old, new = counts
    if creates and old:
        raise _Unreadable
    changed = False
    pos = end
    while pos < len(data) and (old or new):
        end = _line_end(data, pos)
        first = data[pos]
        if data[end - 1] != 0x0A:
            raise _Unreadable
        if first in (0x20, 0x0A):
            old, new = old - 1, new - 1
        elif first == 0x2D:
            old, changed = old - 1, True
        elif first == 0x2B:
            new, changed = new - 1, True
        elif first != 0x5C or end - pos < 12 or data[pos + 1] != 0x20:
            raise _Unreadable
        pos = end
    if old or new or not changed:
        raise _Unreadable
    if len(data) - pos > 12 and data.startswith(b"\\ ", pos):
        pos = _line_end(data, pos)
    return pos


def _skip_binary(data: bytes, pos: int) -> int:
    """Skip the forward and optional reverse hunk of a binary section."""
    for forward in (True, False):
        if not data.startswith((b"literal ", b"delta "), pos):
            if forward:
                raise _Unreadable
            break
        blank = data.find(b"\n\n", _line_end(data, pos) - 1)
        if blank < 0:
            raise _Unreadable
        pos = blank + 2
    return pos


def patch_names(patch: bytes) -> PatchNames:
    """Every file name the patch's headers give, read as ``git apply`` reads them."""
    return _Reader(patch).read()
