# Board profiles: every pin, rate and size the firmware needs, for each supported board,
# in one file. `sotto flash --profile NAME` writes the chosen name to PROFILE_FILE on
# the board; without that file the firmware uses DEFAULT_PROFILE.

from sotto_fw import wire

FIRMWARE_VERSION = "sotto-fw 0.1.0"
DEFAULT_PROFILE = "esp32s3"
PROFILE_FILE = "sotto_profile.txt"

_ALL_FORMATS = wire.FMT_PCM16 | wire.FMT_MULAW | wire.FMT_ADPCM

PROFILES = {
    # ESP32-S3 DevKitC-1 + INMP441 mic + MAX98357A amp; host link on UART1 (a USB-serial adapter).
    "esp32s3": {
        "board": "esp32s3",
        "transport": "uart",  # "uart" (machine.UART) or "usb-cdc" (sys.stdin/stdout)
        "uart_id": 1,
        "uart_tx": 17,  # UART1 on free pins: UART0 (43/44) carries the REPL
        "uart_rx": 18,
        "baud": 921600,
        "uart_rxbuf": 8192,
        "uart_txbuf": 8192,
        # INMP441: 24 data bits at the top of 32-bit slots. shift 12 keeps 20 of them in
        # an int16 (24 dB over the top 16 bits: speech at arm's length is ~-50 dBFS).
        "mic_i2s": {"id": 0, "sck": 4, "ws": 5, "sd": 6, "ibuf": 8192, "bits": 32, "shift": 12},
        "speaker_i2s": {"id": 1, "sck": 15, "ws": 16, "sd": 7, "ibuf": 8192},
        "mic_formats": _ALL_FORMATS,
        "speaker_formats": _ALL_FORMATS,
        "mic_rates": (16000, 8000),
        "speaker_rates": (22050, 16000, 8000),
        "speaker_buffer": 32768,  # PCM16 bytes of ring buffer (~0.74 s at 22050 Hz)
        "frame_ms": 20,
        "button_pin": 0,  # BOOT button, active low
        "button_active_low": True,
        "led_pin": 2,
        "led_active_low": False,
        "outputs": (38, 39),  # CMD_GPIO index -> pin
        "vad": True,
        # Free GC heap at boot, which the simulated board is limited to (-X heapsize). With
        # PSRAM (DevKitC-1 N8R8) MicroPython's IDF-5 builds report about 4 MB; later
        # builds start smaller and grow the heap into PSRAM on demand.
        "heap_free": 4 * 1024 * 1024,
    },
    # Raspberry Pi Pico (RP2040): USB-CDC to the host, I2S via PIO-backed machine.I2S.
    "rp2040": {
        "board": "rp2040",
        "transport": "usb-cdc",
        "uart_id": 0,
        "uart_tx": 0,
        "uart_rx": 1,
        "baud": 921600,  # nominal: USB-CDC ignores the baud rate
        "uart_rxbuf": 4096,
        "uart_txbuf": 4096,
        # SPH0645: 18 data bits at the top of 32-bit slots.
        "mic_i2s": {"id": 0, "sck": 10, "ws": 11, "sd": 12, "ibuf": 4096, "bits": 32, "shift": 12},
        "speaker_i2s": {"id": 1, "sck": 18, "ws": 19, "sd": 20, "ibuf": 4096},
        "mic_formats": _ALL_FORMATS,
        "speaker_formats": _ALL_FORMATS,
        "mic_rates": (16000, 8000),
        "speaker_rates": (22050, 16000, 8000),
        "speaker_buffer": 16384,
        "frame_ms": 20,
        "button_pin": 14,
        "button_active_low": True,
        "led_pin": 25,
        "led_active_low": False,
        "outputs": (15, 16),
        "vad": True,
        "heap_free": 160 * 1024,  # of the RP2040's 264 KB SRAM, what MicroPython leaves free at boot
    },
}


def profile_names():
    return tuple(PROFILES)


def get_profile(name):
    """A copy of the named profile (callers may change it without touching PROFILES)."""
    if name not in PROFILES:
        raise ValueError("unknown board profile: " + str(name))
    p = dict(PROFILES[name])
    p["name"] = name
    p["firmware"] = FIRMWARE_VERSION
    return p


def active_profile_name():
    """The name written by `sotto flash`, else DEFAULT_PROFILE."""
    try:
        with open(PROFILE_FILE) as f:
            name = f.read().strip()
    except OSError:
        return DEFAULT_PROFILE
    return name if name in PROFILES else DEFAULT_PROFILE


def active_profile():
    return get_profile(active_profile_name())
