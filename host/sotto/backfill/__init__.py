"""ASR entity backfill: the entities in the working memory help recognition.

Two stages, both offline:
- before recognition, `sotto.backfill.vosk_grammar`: `supports_runtime_grammar(model_dir)`,
  `model_vocabulary(model_dir)`, `vocabulary_for_vosk(entities, base_phrases, vocabulary=None)`
  and `recognizer_grammar(model_dir, entities, base_phrases)`, which give Vosk a runtime
  phrase list (the `grammar` argument of `KaldiRecognizer(model, rate, grammar)`) when the
  model has a dynamic graph;
- after recognition, `sotto.backfill.corrector.EntityCorrector(known_entities, lang)`:
  `.correct(transcript) -> (text, corrections)` maps a misheard span to a known entity by
  sound (pinyin for Chinese, a phonetic key for English) and leaves ordinary words alone.

`sotto.backfill.entities.entities_from_state(state)` lists the entities a working-memory
state knows; `sotto.backfill.evaluate` measures the corrector on the shipped data sets
(`sotto backfill`).
"""

from sotto.backfill.corrector import Correction, EntityCorrector

__all__ = ["Correction", "EntityCorrector"]
