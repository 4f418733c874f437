"""GraSP's options: the hyperparameters of Section 4 and the ablations of Table 2.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting".
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: relation chains: cosine lost per fact a chain walks beyond the question's depth range (chosen on more-dev's
#: folds by topic, docs/benchmarks.md round 16)
DEPTH_WEIGHT = 0.1


class GraSPOptions(BaseModel):
    """Hyperparameters (the public code's defaults) and the ablations of Table 2."""

    model_config = ConfigDict(extra="forbid")

    k1: int = Field(8, ge=1, le=64, description="relations kept per entity and direction (4.1)")
    k2: int = Field(8, ge=1, le=64, description="neighbours kept per relation, by name similarity (4.1)")
    hops: int = Field(2, ge=1, le=4, description="hops l of the extracted subgraph (Table 4: 1, 2, 3; 4 reaches "
                                                 "the answer of a question that walks 4 facts); when not set and "
                                                 "the chain reader ranks: reader_hops")
    reader_hops: int = Field(4, ge=1, le=4, description="ranker=reader, hops not set: the hops of the extracted "
                                                        "subgraph (the reader reads chains of up to 4 facts)")
    cap: int = Field(60, ge=1, le=500, description="most triples in one subgraph")
    max_nodes: int = Field(200, ge=2, le=2000, description="most entities in one subgraph (the topic included): "
                                                           "facts that would add more are not taken")
    chain_extraction: bool = Field(True, description="ranker=reader: each hop of the extraction keeps first the "
                                   "facts that continue a relation chain from the topic, best chain (the reader's "
                                   "score against the question) first, then the others by the relation and name "
                                   "scores; off: relation and name scores alone")
    scan_cap: int = Field(1000, ge=1, le=100_000, description="neighbours per relation ranked on a hub (bounded work)")
    iterations: int = Field(3, ge=1, le=5, description="ANSWER/ENTITY rounds; the last is forced to answer")
    max_selected: int = Field(5, ge=1, le=20, description="entities kept from LLM_select per round")
    select_tokens: int = Field(48, ge=4, le=256, description="tokens LLM_select may write")
    checkpoint: str | None = Field(None, description="trained encoder (default: <data dir>/models/grasp/"
                                                     "grasp-<nodes|gat|text>.safetensors, made by kgqa train grasp; "
                                                     "the nodes head falls back to the shipped demo checkpoint)")
    head: Literal["auto", "nodes", "softprompt"] = Field(
        "auto", description="LLM_select: softprompt (the paper: a soft-prompt LLM reads the GAT's tokens) or nodes "
                            "(a node-scoring head on the same GAT, no LLM); auto = softprompt when a soft-prompt "
                            "model is served (KGQA_SOFTPROMPT_BACKEND=vllm|openai) or an ablation is asked, else nodes")
    answer_llm: bool = Field(False, description="nodes head: ask LLM_answer (the chat model) for ANSWER/ENTITY "
                                                "as Section 4.3 does; default: the head decides, no LLM in the loop")
    answer_typing: bool = Field(True, description="nodes head, not ranked by the chain reader (which reads the "
                                "kind asked for itself: reader_kind_weight): when the question names the answer's "
                                "type ('In which city …') and the subgraph's entities have type evidence (classes "
                                "or descriptions), the answer is the top node of that type; with none of that type "
                                "the loop continues from the best node")
    answer_p: float = Field(0.5, ge=0.0, le=1.0, description="nodes head, no LLM_answer: answer when the "
                                                              "top node's probability reaches this, else move on")
    ranker: Literal["auto", "reader", "head"] = Field(
        "auto", description="nodes head: who ranks the subgraph's nodes: reader (the chain reader of `kgqa train "
                            "paths`, the best score of the relation chains reaching a node; the answer is its top "
                            "node of the answer type) or head (the GAT's node probabilities); auto = reader when "
                            "its checkpoint fits the loaded KG, else head (one fallback line says why)")
    reader_checkpoint: str = Field("", description="ranker=reader: the chain reader's checkpoint; empty = <data dir>/"
                                   "models/paths/chain-reader.safetensors when it exists, else the shipped one")
    reader_head_weight: float = Field(0.0, ge=0.0, le=100.0, description="ranker=reader: a node's score = the "
                                      "reader's best chain logit + this × ln of the head's probability (0: the "
                                      "head only breaks ties)")
    reader_kind_weight: Annotated[float, Field(ge=0.0, le=100.0)] | Literal["auto"] = Field(
        "auto", description="ranker=reader: add this × the reader's score of the question against what kind of "
                            "thing a node is (its classes or description, else the relation reaching it) to the "
                            "node's score (0: off); auto = the ratio of the kind and reader weights that `kgqa train "
                            "terminal` fitted for the reader on the KG's generated questions (<reader>.terminal."
                            "json), 0 when none was fitted for it")
    ends_split: bool = Field(True, description="ranker=reader or relation chains: a chain's score is shared among "
                             "the nodes it reaches (a chain that reaches k nodes is a k-way guess: log k less, in "
                             "the units VisPath's terminal selection ranks in), and the answer's kind breaks a tie "
                             "between ends of one chain")
    depth_weight: float = Field(DEPTH_WEIGHT, ge=0.0, le=100.0, description="relation chains (no reader and no "
                                "node head for the KG): a chain loses this much cosine per fact it walks more or "
                                "fewer than the question's depth (one fact per relation its phrases name, the "
                                "answer's type noun an optional one); 0: off")
    no_soft_prompt: bool = Field(False, description="ablation: LLM_select sees question + candidates only")
    triples_only: bool = Field(False, description="ablation: linearised triples, no soft prompt")
    text_soft_prompt: bool = Field(False, description="ablation: soft tokens from triple sentence embeddings "
                                                      "(no GNN)")

    @model_validator(mode="after")
    def _one_variant(self):
        on = [n for n in ("no_soft_prompt", "triples_only", "text_soft_prompt") if getattr(self, n)]
        if len(on) > 1:
            raise ValueError(f"choose at most one of the ablations no_soft_prompt, triples_only, "
                             f"text_soft_prompt (got {', '.join(on)})")
        return self

    @property
    def variant(self) -> str:
        """Which LLM_select input: gat (GraSP), text, triples or none (Table 2's rows)."""
        if self.no_soft_prompt:
            return "none"
        if self.triples_only:
            return "triples"
        return "text" if self.text_soft_prompt else "gat"


def default_checkpoint(settings, variant: str) -> Path:
    """Where ``kgqa train grasp`` writes the ``variant`` encoder and ``kgqa ask`` loads it from."""
    return Path(settings.models_dir) / "grasp" / f"grasp-{variant}.safetensors"
