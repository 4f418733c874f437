"""``kgqa eval``'s record of one question: what the method answered and how each metric scored it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class QuestionResult:
    id: str
    hops: Optional[int]
    question: str
    gold: str
    prediction: Optional[str] = None
    prediction_id: Optional[str] = None
    start_entity_id: Optional[str] = None
    error: Optional[str] = None           # the method raised: recorded, the run went on
    abstained: bool = False
    sbert_cosine: Optional[float] = None
    # None = metric skipped for this question (a field it needs is missing)
    sbert: Optional[bool] = None
    exact_match: Optional[bool] = None
    hits1: Optional[bool] = None
    start_entity: Optional[bool] = None
    gold_path: Optional[bool] = None
    selected: Optional[bool] = None          # gold path retained and chosen; None unless it was retained
    why_wrong: Optional[str] = None          # a wrong answer's first cause (metrics.WHY_WRONG); None if right
    lost_at_hop: Optional[int] = None        # a hop-by-hop method: the hop at which the gold path was dropped
    tied: Optional[bool] = None              # wrong, and the gold answer scored exactly as the given one (a tie)
    doc_recall: Optional[bool] = None        # document QA: supporting document among the recalled ones
    evidence_recall: Optional[bool] = None   # document QA: supporting section among the context's chunks
    cited_page: Optional[bool] = None        # document QA, a right answer with a supporting page: cited on that page
    context_tokens: Optional[int] = None     # document QA: tokens of the retrieved context
    seconds: Optional[float] = None
    cost: dict = field(default_factory=dict)   # role -> {calls, prompt_tokens, completion_tokens, seconds}
    fallbacks: dict = field(default_factory=dict)  # fallback code -> how many times this question took it
    trace_id: Optional[str] = None
