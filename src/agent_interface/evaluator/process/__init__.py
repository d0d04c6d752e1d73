"""Exact processes on this machine: the host-process provider (``local_process``), its
per-process supervisor (``_supervisor``, ``supervised_process``, with the control
directory every provider's supervised processes are read from in ``control_directory``),
its SQLite record (``process_store``), confined file access (``confined_files``) and the namespace probe
(``isolation``)."""
