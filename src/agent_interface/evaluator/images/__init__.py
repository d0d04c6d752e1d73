"""Images a process runs from: host executables pinned by content (``host_image``), unpacked
OCI images handed to container providers (``image_root``), the bounded archive reader
(``safe_tar``) that unpacks what a snapshot carries, and the OCI image store
(``oci_store``): checked blobs, bounded documents, platform selection, ``skopeo`` imports
and layers unpacked safely into read-only roots cached per manifest digest."""
