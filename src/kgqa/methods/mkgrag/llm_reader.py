"""The LLM reader of mKG-RAG: the paper's generation from the retrieved context.

"mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation for Knowledge-intensive
VQA", Section 3.2.2, last paragraph: the answer is generated from the image, the question and the retrieved
graph elements and chunks (``prompts.answer_prompt``, the context in a data block): VisionModel(image, question,
context), or the ChatModel without an image.

Answer fallback (interpretation, the paper has none: a model answered but unusably, ``BadModelReply``, or
``reader=llm`` under ``KGQA_CHAT_BACKEND=none``): the name of the best-ranked retrieved entity that the question
and the recognised image name do not already mention; no entity → abstain. A model that cannot be reached
(``ModelUnavailable``) is not caught: the question fails.
"""

from __future__ import annotations

from kgqa.core.errors import BadModelReply
from kgqa.core.result import Fallback
from kgqa.methods.mkgrag import prompts as P
from kgqa.methods.mkgrag.reading import ReadRequest
from kgqa.methods.mkgrag.records import Reading


class LLMReader:
    """Generation by ``vision`` (with an image) or ``chat`` (without), at most ``max_tokens`` answer tokens."""

    def __init__(self, vision, chat, max_tokens: int):
        self.vision, self.chat, self.max_tokens = vision, chat, max_tokens

    def read(self, req: ReadRequest) -> Reading:
        text, fallback = self._generate(req)
        reason = ("abstained" if not text else "fallback: best-ranked retrieved entity" if fallback is not None
                  else "answered from the retrieved context")
        return Reading(text, None, None, None, 0, reason, reader_name="llm", fallback=fallback)

    def _generate(self, req: ReadRequest) -> tuple[str | None, Fallback | None]:
        prompt = P.answer_prompt(req.question, req.context)
        try:
            if req.image is not None:
                reply = self.vision.generate_json(req.image, prompt, P.GeneratedAnswer, system=P.ANSWER_SYSTEM,
                                                  max_tokens=self.max_tokens)
            else:
                reply = self.chat.generate_json(prompt, P.GeneratedAnswer, system=P.ANSWER_SYSTEM,
                                                max_tokens=self.max_tokens)
            return reply.answer.strip() or None, None
        except BadModelReply as e:
            # the best-ranked retrieved entity that the question and the recognised image name do not mention
            asked = f"{req.question} {req.image_note or ''}".casefold()
            for el in sorted(req.elements, key=lambda x: -x.sim):
                if el.kind == "entity" and el.name.casefold() not in asked:
                    return el.name, Fallback(e.code, f"answer: best-ranked retrieved entity {el.name!r} ({e})")
            return None, Fallback(e.code, f"answer: abstained, no retrieved entity to fall back on ({e})")
