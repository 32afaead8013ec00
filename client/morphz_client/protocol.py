"""The model protocol, offline (R45): re-exported from `morphz_protocol`, the package the
server and the client share, so `morphz_client.protocol` keeps working for client users."""

import morphz_protocol
from morphz_protocol import *  # noqa: F403

__all__ = morphz_protocol.__all__
