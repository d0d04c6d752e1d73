"""Exact processes in OCI containers on ``runc`` (see :mod:`.oci_provider`)."""
