"""Blobs: binary tool output kept out of answers and served in chunks.

The room holds the store (``_store.py``: ``BlobStore``, handles of every kind and chunk
reads) over the spool (``_spool.py``: content-addressed files in a private directory, their
time-to-live and capacity), the handles that name a blob (``_handles.py``: signed, bound to
this Computer), the limits (``_settings.py``: ``BlobSettings``), the rewriting of a tool
result so binary items travel as a blob reference (``_sideband.py``), and the answer to
``client:get_blob`` (``_serve.py``). Other modules import from here, not from the files inside.
"""

from ._handles import HandleCodec
from ._serve import serve_get_blob
from ._settings import BlobSettings
from ._sideband import ANSWER_MARGIN, encoded_size, offload_binaries
from ._store import BlobChunk, BlobInfo, BlobResolver, BlobSource, BlobStore, SpoolUsage

__all__ = [
    "ANSWER_MARGIN",
    "BlobChunk",
    "BlobInfo",
    "BlobResolver",
    "BlobSettings",
    "BlobSource",
    "BlobStore",
    "HandleCodec",
    "SpoolUsage",
    "encoded_size",
    "offload_binaries",
    "serve_get_blob",
]
