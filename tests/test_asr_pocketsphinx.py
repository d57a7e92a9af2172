"""pocketsphinx recognizer: turn logic on a fake decoder (quick), the real model on Piper speech (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fakes_asr import FakeDecoder
from sotto.engines import sphinx_asr
from sotto.engines.base import AudioChunk, Recognizer
from sotto.engines.normalize import NormalizingRecognizer
from sotto.engines.transcribe import transcribe
from sotto.errors import AudioFormatError, ModelNotFound

RATE = 16000
CHUNK = 640  # 20 ms


def speech(ms: int) -> bytes:
    t = np.arange(int(RATE * ms / 1000)) / RATE
    return (3000 * np.sin(2 * np.pi * 220 * t)).astype("<i2").tobytes()


def silence(ms: int) -> bytes:
    return bytes(2 * int(RATE * ms / 1000))


def feed(rec: Recognizer, turn: int, pcm: bytes, start_seq: int = 0) -> list:
    out = []
    decoder = getattr(rec, "_decoder", None)
    for i, offset in enumerate(range(0, len(pcm), CHUNK)):
        if isinstance(decoder, FakeDecoder):
            decoder.new_call()
        out.extend(rec.accept(AudioChunk(turn, start_seq + i, pcm[offset : offset + CHUNK], RATE)))
    return out


def recognizer(*utterances: list[tuple[str, float]]) -> tuple[sphinx_asr.PocketsphinxRecognizer, FakeDecoder]:
    decoder = FakeDecoder(*utterances)
    return sphinx_asr.PocketsphinxRecognizer(decoder, Path("en-us"), endpoint_silence_ms=600), decoder


def test_partials_grow_then_one_final_with_word_confidences_at_the_endpoint() -> None:
    rec, decoder = recognizer([("book", 0.9), ("a(2)", 0.4), ("table", 0.99)])
    results = feed(rec, 1, silence(2000) + speech(400) + silence(700))
    partials = [r.text for r in results if not r.final]
    finals = [r for r in results if r.final]
    assert partials and partials[-1] == "book a table"
    assert all("book a table".startswith(p) for p in partials)
    assert len(finals) == 1 and finals[0].text == "book a table"  # fillers and "(2)" variants dropped
    words = finals[0].words
    assert [(w.word, w.confidence) for w in words] == [("book", 0.9), ("a", 0.4), ("table", 0.99)]
    assert finals[0].confidence == pytest.approx((0.9 + 0.4 + 0.99) / 3, abs=1e-3)
    assert [w.word for w in finals[0].least_confident(0.5)] == ["a"]
    # Word times count from the start of the turn's audio: the utterance began with the
    # 1 s pre-roll before the speech, 2 s in.
    assert words[0].start_s == pytest.approx(1.0 + 0.1, abs=0.02)
    # The silence before the speech was not given to the decoder beyond the pre-roll.
    assert decoder.started == 1 and decoder.fed_bytes[0] < 2 * RATE * (1.0 + 0.4 + 0.7) + CHUNK
    # No call decoded more than its share: the pre-roll went through the backlog.
    assert max(decoder.bytes_per_call) <= 2 * RATE * sphinx_asr.DECODE_PER_CALL_MS / 1000 + CHUNK


def test_one_final_per_turn_and_repeated_or_late_chunks_are_dropped() -> None:
    rec, decoder = recognizer([("hello", 0.8)], [("again", 0.7)])
    pcm = speech(200) + silence(700)
    first = feed(rec, 1, pcm)
    assert [r.text for r in first if r.final] == ["hello"]
    assert feed(rec, 1, speech(200), start_seq=1000) == []  # after the final, the turn is closed
    assert rec.accept(AudioChunk(1, 3, speech(20), RATE)) == []  # an old sequence number
    assert rec.flush(1) == []
    second = feed(rec, 2, pcm)
    assert [r.text for r in second if r.final] == ["again"] and decoder.started == 2


def test_flush_gives_the_final_when_the_input_ends_mid_speech() -> None:
    rec, _ = recognizer([("wait", 0.6)])
    assert not any(r.final for r in feed(rec, 4, speech(300)))
    finals = rec.flush(4)
    assert [f.text for f in finals] == ["wait"] and rec.flush(4) == []


def test_noise_without_words_gives_no_final_and_the_turn_goes_on() -> None:
    rec, _ = recognizer([], [("yes", 0.9)])
    results = feed(rec, 1, speech(200) + silence(700) + speech(200) + silence(700))
    assert [r.text for r in results if r.final] == ["yes"]


def test_a_chunk_at_the_wrong_rate_is_an_error() -> None:
    rec, _ = recognizer()
    with pytest.raises(AudioFormatError):
        rec.accept(AudioChunk(1, 0, silence(20), 8000))


def test_no_model_for_other_languages() -> None:
    with pytest.raises(ModelNotFound, match="ships no model for language 'zh'"):
        sphinx_asr.model_folder("zh")


def test_the_decoder_is_configured_with_the_named_settings() -> None:
    model = sphinx_asr.model_folder("en")
    chosen = sphinx_asr._config(model, RATE, sphinx_asr.DECODER_SETTINGS)
    for name, value in sphinx_asr.DECODER_SETTINGS.params().items():
        assert chosen[name] == value
    other = sphinx_asr._config(model, RATE, sphinx_asr.DecoderSettings(lw=2.5, wip=0.3, fwdflat=True, bestpath=False))
    assert (other["lw"], other["wip"], other["fwdflat"], other["bestpath"]) == (2.5, 0.3, True, False)


# ------------------------------------------------------------------ the real model


@pytest.fixture(scope="module")
def piper() -> object:
    from sotto.engines import tts

    return tts.load()


def say(voice: object, text: str) -> tuple[bytes, int]:
    """Piper speech without its sampling noise: the same audio on every run, so what the
    recogniser hears is a fixed input (with the noise, "tomorrow" was once heard "to more")."""
    from piper.config import SynthesisConfig  # type: ignore[import-not-found,import-untyped]

    still = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    audio = b"".join(chunk.audio_int16_bytes for chunk in voice.voice.synthesize(text, syn_config=still))  # type: ignore[attr-defined]
    return audio, voice.sample_rate  # type: ignore[attr-defined]


@pytest.mark.slow
def test_real_model_recognises_piper_speech_with_word_posteriors(piper: object) -> None:
    # A time, so that normalisation writes its number as digits (an isolated "three" stays a word).
    pcm, rate = say(piper, "Please call me tomorrow at 3 pm.")
    rec = NormalizingRecognizer(sphinx_asr.load(), "en")
    heard = transcribe(rec, pcm, rate)
    assert len(heard.finals) == 1 and heard.finals[0].final
    text = heard.text
    assert "tomorrow" in text and "3 pm" in text  # "three pm" / "three p m" normalised
    assert "three" in heard.heard
    assert heard.words and all(w.confidence is not None and 0.0 <= w.confidence <= 1.0 for w in heard.words)
    assert [w.word for w in heard.words] == text.split()
    assert rec.real_time_factor is not None and rec.real_time_factor < 1.0


@pytest.mark.slow
def test_real_model_streams_partials_before_the_final(piper: object) -> None:
    from sotto.audio.resample import resample_pcm16

    pcm, rate = say(piper, "The weather is nice today.")
    rec = sphinx_asr.load()
    results = feed(rec, 9, silence(300) + resample_pcm16(pcm, rate, RATE) + silence(1200))
    results += rec.flush(9)
    assert [r for r in results if not r.final] and results[-1].final
    assert sum(r.final for r in results) == 1 and "weather" in results[-1].text


@pytest.mark.slow
def test_keyphrase_mode_spots_known_entities_and_ignores_other_speech(piper: object) -> None:
    from sotto.backfill.sphinx_keyphrases import recognizer_keyphrases

    from sotto.models.embedded import sphinx_model_folder

    lines = recognizer_keyphrases(["Mr. Wang", "Zqxw Blorft"], ["yes", "no"], sphinx_model_folder("en"))
    assert [line.split(" /")[0] for line in lines] == ["yes", "no", "mr wang"]  # Zqxw is not in the dictionary
    rec = sphinx_asr.load(keyphrases=lines)
    spotted = transcribe(rec, *say(piper, "Mister Wang is waiting at the gate."), turn_id=1)
    assert "mr wang" in spotted.text
    # Other speech gives no entity (Piper's voice varies run to run: a short "no" may still fire).
    nothing = transcribe(rec, *say(piper, "The weather is nice today, isn't it?"), turn_id=spotted.next_turn_id)
    assert "wang" not in nothing.text
