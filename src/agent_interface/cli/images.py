"""``image``: build task images here and list an image store.

``image build CONTAINERFILE --images STORE_DIR --name NAME [--tag TAG] [--base
debian|debian-apt|busybox] [--on CONTAINERFILE] [--suite SUITE] [--include PKG]... [--context DIR] [--cache DIR]
[--isolation chroot|oci] [--ca-certificates FILE] [--dry-run] [--json]`` makes the Debian base with ``mmdebstrap``
(cached), builds the Containerfile on it with ``buildah`` (cached by the Containerfile's bytes,
the base's digest and the context's files), and imports the oci-archive into the store; it
prints the reference ``NAME@sha256:...`` a task or ``--image`` names
(:mod:`agent_interface.evaluator.images.image_build`). ``--dry-run`` prints the commands
instead. ``image list --images STORE_DIR`` lists the store's images.

Exit codes follow the CLI conventions: 0 built (or listed), 1 refused (a tool failed: its
name, exit status and last output line; an invalid Containerfile, context or name), 2 not
run (bad usage, a store that is not a directory).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from agent_interface.cli.candidate_inputs import refused
from agent_interface.cli.conventions import EXIT_OK, CommandError, emit_json
from agent_interface.core.errors import ContractError

__all__ = ["cmd_image_build", "cmd_image_list", "register"]


def _store(path: str) -> Any:
    from agent_interface.evaluator.images.oci_store import OciImageStore

    if os.path.exists(path) and not os.path.isdir(path):
        raise CommandError("not_a_directory", "not a directory", document=path)
    return OciImageStore(path)


def _base(args: argparse.Namespace) -> Any:
    from dataclasses import replace

    from agent_interface.evaluator.images.image_build import BASES

    base = BASES[args.base]
    changes: dict[str, Any] = {}
    if args.suite is not None:
        changes["suite"] = args.suite
    if args.include:
        changes["include"] = tuple(sorted({*base.include, *args.include}))
    if args.mirror is not None:
        changes["mirror"] = args.mirror
    return replace(base, **changes) if changes else base


def _dry_run(args: argparse.Namespace, builder: Any, base: Any) -> int:
    from agent_interface.evaluator.images.image_build import BuiltBase

    built = builder.cached_base(base)
    commands: list[list[str]] = []
    if built is None:
        layout = builder.cache / "bases" / base.key.removeprefix("sha256:") / "layout"
        commands += builder.base_argv(base, builder.cache / "tmp" / "base.tar", layout)
        built = BuiltBase(base, layout, "sha256:<base>", 0.0, False)
    builds = [(args.on, None), (args.containerfile, args.context)] if args.on else [(args.containerfile, args.context)]
    for containerfile, context in builds:
        file = Path(os.path.abspath(containerfile))
        where = Path(os.path.abspath(context)) if context else file.parent
        known = "<" not in built.manifest_digest
        key = builder.build_key(file, built, where) if known else "sha256:<key>"
        archive = builder.cache / "tmp" / "image.tar"
        commands += builder.build_argv(file, built, where, key, archive)
        built = BuiltBase(base, archive.parent, "sha256:<image below>", 0.0, False, archive)
    if args.json:
        emit_json({"document": args.containerfile, "verdict": "dry-run", "commands": commands})
    else:
        for argv in commands:
            print(shlex.join(argv))
    return EXIT_OK


def cmd_image_build(args: argparse.Namespace) -> int:
    """``image build``: see the module docstring."""
    from agent_interface.evaluator.images.image_build import ImageBuilder, build_into_store

    try:
        base = _base(args)
        def say(text: str) -> None:
            print(text, file=sys.stderr, flush=True)

        builder = ImageBuilder(args.cache, isolation=args.isolation, ca_certificates=args.ca_certificates,
                               progress=None if args.json else say)
        if args.dry_run:
            return _dry_run(args, builder, base)
        store = _store(args.images)
        built = build_into_store(store, args.containerfile, name=args.name, tag=args.tag, base=base,
                                 context=args.context, builder=builder, on=args.on)
    except ContractError as error:
        return refused(args, args.containerfile, error)
    summary = built.to_json()
    if args.json:
        emit_json({"document": args.containerfile, "verdict": "built", **summary})
    else:
        how = "cached" if built.cached else f"built in {built.build_seconds:.1f}s"
        base_how = "cached" if built.base.cached else f"made in {built.base.seconds:.1f}s"
        print(f"{summary['reference']}  ({how}; base {base.variant} {base.suite} {base_how}; "
              f"archive {built.archive_bytes / 1e6:.1f} MB)")
    return EXIT_OK


def cmd_image_list(args: argparse.Namespace) -> int:
    """``image list``: every image of the store, name, tag and digest."""
    if not os.path.isdir(args.images):
        raise CommandError("not_a_directory", "not a directory", document=args.images)
    images = _store(args.images).images()
    if args.json:
        emit_json([{"name": i.name, "tag": i.tag, "digest": i.digest, "reference": i.reference,
                    "source": i.source} for i in images])
    else:
        for image in images:
            print(f"{image.reference}" + (f"  tag {image.tag}" if image.tag else ""))
    return EXIT_OK


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``image`` group (``build``, ``list``) to the main CLI."""
    from agent_interface.evaluator.images.image_build import BASES

    image = subparsers.add_parser("image", help="build task images here (mmdebstrap, buildah) and list a store")
    actions = image.add_subparsers(dest="image_command", required=True, metavar="ACTION")
    build = actions.add_parser(
        "build", help="build a Containerfile on a Debian base made here, into an image store",
        description="Make a Debian base with mmdebstrap (cached), build CONTAINERFILE on it with buildah (its "
        "first FROM is replaced by the base; cached by the Containerfile, the base digest and the context), "
        "and import the oci-archive into --images under --name. Prints NAME@sha256:DIGEST.",
    )
    build.add_argument("containerfile", metavar="CONTAINERFILE")
    build.add_argument("--images", metavar="STORE_DIR", required=True, help="the OCI image store to import into")
    build.add_argument("--name", required=True, help="the image's name in the store, e.g. task/python")
    build.add_argument("--tag", help="a tag beside the name (the digest stays the identity)")
    build.add_argument("--base", choices=sorted(BASES), default="debian",
                       help="debian (minbase), debian-apt, or busybox (Debian's static busybox only); "
                            "default debian")
    build.add_argument("--suite", help="the Debian suite (default bookworm)")
    build.add_argument("--include", action="append", metavar="PACKAGE", help="another package in the base")
    build.add_argument("--mirror", metavar="URL", help="the Debian mirror (default http://deb.debian.org/debian)")
    build.add_argument("--on", metavar="CONTAINERFILE",
                       help="build this Containerfile first (on --base) and CONTAINERFILE on it, e.g. a harness "
                            "on the task image")
    build.add_argument("--context", metavar="DIR", help="the build context (default: the Containerfile's directory)")
    build.add_argument("--cache", metavar="DIR",
                       help="where bases and builds are kept (default ~/.cache/agent-interface/image-builds)")
    build.add_argument("--isolation", choices=("chroot", "oci"), default="chroot",
                       help="buildah's isolation of RUN steps (default chroot)")
    build.add_argument("--ca-certificates", metavar="FILE",
                       help="a CA bundle bound in for RUN steps only, named by the build argument "
                            "BUILD_CA_CERTIFICATES (for HTTPS through an inspecting proxy)")
    build.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    build.add_argument("--json", action="store_true", help="print the result (and any error) as JSON")
    build.set_defaults(handler=cmd_image_build)
    listing = actions.add_parser("list", help="list the images of a store")
    listing.add_argument("--images", metavar="STORE_DIR", required=True)
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=cmd_image_list)
