"""sotto: an offline voice agent for MicroPython boards.

The host side: serial link, speech recognition, working memory, reply and speech synthesis.
"""

from sotto import offline as _offline

_offline.enforce_offline_env()

__version__ = "0.1.0"
