"""Prompts and JSON schema of mKG-RAG's answer step.

mKG-RAG: "mKG-RAG: Leveraging Multimodal Knowledge Graphs in Retrieval-Augmented Generation
for Knowledge-intensive VQA", Section 3.2.2: the answer from image, question
and retrieved context. The extraction prompts (Section 3.1) run at load time and live in
``kgqa.loaders.extraction_prompts``. Text from documents and questions is data
(``kgqa.core.prompting``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from kgqa.core.prompting import DATA_RULE, data_block

# --------------------------------------------------------------------------- 3.2.2 answer
class GeneratedAnswer(BaseModel):
    answer: str = Field(min_length=1, max_length=64, description="a short answer: a name, number or date")


ANSWER_SYSTEM = ("You answer questions about an image using the retrieved knowledge given as context. Answer "
                 "with a short phrase only. " + DATA_RULE)


def answer_prompt(question: str, context: str, image_note: str | None = None) -> str:
    """The question and the retrieved graph elements and chunks (Section 3.2.2, last paragraph)."""
    seen = f"The image shows: {image_note}\n" if image_note else ""
    return (
        f"{data_block('context', context)}\n{seen}{data_block('question', question)}\n"
        "Answer the question from the context. Reply with the answer only (a name, number or date)."
    )
