"""Audio helpers: resampling, codecs and WAV handling."""
