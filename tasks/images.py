"""invoke images.build / images.host-plugin (the work is in lab.images)."""

from ._factory import collection as _collection

collection = _collection("images")
