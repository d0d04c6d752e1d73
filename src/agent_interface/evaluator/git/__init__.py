"""The Git sandbox: ``git`` run on a repository's objects only, never on its configuration.

``errors`` and ``limits`` are shared by the rest: ``paths`` (safe tree paths), ``patch``
(binary patch gates), ``repository`` and ``sandbox`` (the isolated ``git`` invocations),
``objects`` and ``result`` (reading what ``git`` wrote), ``tree`` (a patch applied onto a
base tree), ``export`` (a verified tree written to disk) and ``tree_hash`` (a directory's
Git tree id computed again without ``git``).
"""
