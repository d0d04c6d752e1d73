"""Images a process runs from: host executables pinned by content (``host_image``), unpacked
OCI images handed to container providers (``image_root``), and the bounded archive reader
(``safe_tar``) that unpacks what an image or a snapshot carries."""
