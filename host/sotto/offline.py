"""Offline guarantees that must hold before any engine library is imported.

onnxruntime 1.29+ resolves a telemetry host some seconds after import unless
ORT_DISABLE_TELEMETRY is set before it loads; Hugging Face helpers try the hub
unless told they are offline. sotto makes no network attempt at all, so these are
set as early as `import sotto`.
"""

import os

OFFLINE_ENV = {
    "ORT_DISABLE_TELEMETRY": "1",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "DO_NOT_TRACK": "1",
}


def enforce_offline_env() -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
