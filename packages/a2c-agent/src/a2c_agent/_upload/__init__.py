"""Uploads from the Agent to a Computer's landing dir (``client:put_blob``)."""

from ._mixin import UploadMixin
from ._push import Landed, Source, UploadProgress, push_blob

__all__ = ["Landed", "Source", "UploadMixin", "UploadProgress", "push_blob"]
