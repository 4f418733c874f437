"""Fakes and fixture data that several test modules share.

Test modules import them from here, never from one another: ``vispath`` (the small VisPath
world of the unit tests), ``loader`` (the Wikidata5M sample and a graph recording the loader's
writes), ``vllm_server`` (an OpenAI-compatible server checking vLLM's request contract).
"""
