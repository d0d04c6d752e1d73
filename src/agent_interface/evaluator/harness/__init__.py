"""Real agent CLIs as candidates: one adapter per harness behind one interface.

``adapter`` holds the interface and its value types (native files, settings, the launch,
the parsed outcome, the budget behaviour); ``profile_fields`` reads a profile for an
adapter and refuses every field the harness cannot honour; ``claude_code``, ``codex`` and
``opencode`` write each harness's native configuration, argv and environment and parse its
output; ``native_files`` writes a launch's files and restores the workspace paths before
the patch is captured; ``install`` locates the pinned CLIs and reads the version of the
binary that ran; ``bundle_plan`` recognises a harness bundle and lowers a launch into the
sealed profile plan; ``observation`` is what a receipt records of a harness run.
"""
