"""How the BERT models run at ask time: one runtime layer for the sentence encoder and the learned heads.

- ``backend``: which runtime (``KGQA_READER_BACKEND``: torch, onnx, auto), the one CPU bf16 probe and the
  inference region (torch inference mode and bf16 autocast, or nothing for an ONNX export);
- ``tokens``: Hugging Face ``tokenizers`` over the base model's ``tokenizer.json`` (no ``transformers``, no
  torch), question/passage pairs and padded batches;
- ``onnx``: the one ONNX exporter, the export cache and its fingerprints, onnxruntime sessions.

Where a trained model file is (the data dir's own, else the shipped one) is ``kgqa.core.config.own_or_shipped``.
"""
