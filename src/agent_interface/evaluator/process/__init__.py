"""Exact processes on this machine: the host-process provider (``local_process``), its
per-process supervisor (``_supervisor``, ``supervised_process``), its SQLite record
(``process_store``), confined file access (``confined_files``) and the namespace probe
(``isolation``)."""
