"""What a host-process program sees of other live environments through its mount table.

With the host's paths (no private root), the program's mount namespace is a private copy
of the host's in which every mount under the provider's directory but its own files and
control directory is detached: another live environment's tmpfs (its path, its id, its uid
in the options) is not in ``/proc/self/mountinfo``. A private root shows none either.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.evaluator.local_fixtures import create_input, python_launch, run
from tests.evaluator.test_local_hostile import MODES, _provider

SHOW = "print(open('/proc/self/mountinfo').read())"


@pytest.mark.parametrize("mode", MODES)
def test_another_live_environment_is_not_in_the_mount_table(tmp_path: Path, mode: str) -> None:
    local = _provider(tmp_path, mode)

    async def main() -> tuple[str, str, list[str]]:
        assert local.exact_process is not None
        mine = await local.exact_process.create(create_input(local.image, key=uuid.uuid4().hex))
        other = await local.exact_process.create(create_input(local.image, key=uuid.uuid4().hex))
        process = await mine.process.spawn(python_launch(SHOW))
        termination = (await process.wait()).to_wire()
        assert termination["exitCode"] == 0, (await process.output_bytes("stderr")).decode()
        text = (await process.output_bytes("stdout")).decode()
        uid = str(other._uid)
        await mine.destroy()
        await other.destroy()
        return text, mine.id, [other.id, f"uid={uid}"]

    try:
        text, _mine, secrets = run(main())
    finally:
        local.close()
    assert text.strip()
    for secret in secrets:
        assert secret not in text, secret
