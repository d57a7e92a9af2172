"""Engines behind small interfaces: speech recognition, language model, speech synthesis.

In-process engines (Vosk, llama.cpp, Piper) and remote ones (an OpenAI-compatible
server, Wyoming services) implement the same protocols in `sotto.engines.base`, so
the pipeline never knows which it has.
"""
