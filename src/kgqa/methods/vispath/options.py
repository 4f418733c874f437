"""VisPath's options: the hyperparameters of V-B, the ablations of Table VI, and which steps ask the model.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question Answering"
(arXiv 2609.20843). ``VisPathOptions`` is what ``-o KEY=VALUE`` sets; ``llm_steps`` names the model-asked
steps of Algorithm 1 (``LLM_STEPS``), resolved for the chat backend by ``resolve_llm_steps``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class VisPathOptions(BaseModel):
    """Hyperparameters (V-B defaults) and the four ablations of Table VI."""

    model_config = ConfigDict(extra="forbid")

    M1: int = Field(30, ge=1, le=1000, description="edges kept per frontier entity by Eq. 5 (Eq. 5–7)")
    M2: int = Field(30, ge=1, le=1000, description="paths kept by the chain score σ (Eq. 8)")
    M3: int = Field(3, ge=1, le=1000, description="paths kept after LLM chain examination")
    # The paper's M3 = 3 is what an LLM keeps after examining the chains; when no LLM examined them (the
    # examination's fallback: the top σ paths) the graph-only search keeps M3_fallback instead, so that paths
    # tied on σ at a hub (one relation, many tails) all reach the next hop (ours; 0 = M3, the paper's reading).
    M3_fallback: int = Field(15, ge=0, le=1000, description="paths kept per hop when no LLM examined the chains (the "
                             "examination's fallback keeps the top σ paths); 0 = M3")
    # Diversity at hubs (ours; the paper's reading is 0): a hub's many edges of one relation (Berlin has
    # 89 "located in" facts among 200,000 distractors) tie under a relation-first Eq. 5 and would fill
    # all M1 slots, so the gold relation never reached Eq. 8.
    M1_per_relation: int = Field(5, ge=0, le=1000, description="Eq. 5–7: of the M1 edges kept per frontier entity, at "
                                 "most this many per relation, so other relations reach Eq. 8 (0 = no cap, the "
                                 "paper's top-M1)")
    Dmax: int | None = Field(None, ge=1, le=8, description="maximum search depth; empty: 4 when the chain reader "
                             "scores the chains (it decides the depth), 3 with the rules")
    # δ: the paper sets 0.05 (growing 0.01 per rank); 0.2 keeps the start the grounder ranked first unless a rival
    # fits the question's relations clearly better.
    delta: float = Field(0.2, ge=0.0, lt=2.0, description="δ of Eq. 3 (graph-aware validation margin)")
    delta_step: float = Field(0.01, ge=0.0, lt=1.0, description="δ grows by this per candidate rank")
    # Eq. 3 weighs only how well a candidate's relations fit Q; a rival that fits better is often the entity one
    # hop away on the question's path ("the body of water this island is next to": the body of water has that
    # relation). delta_grounding also asks the rival to make up for how much weaker it was grounded: the
    # margin grows by λ·(r_1 − r_k), the gap in retrieval score (image or name) to the first candidate (ours;
    # 0 = the paper's Eq. 3).
    delta_grounding: float = Field(1.0, ge=0.0, le=10.0, description="Eq. 3: the margin also grows by this times "
                                   "the rival's retrieval-score gap to the first candidate (0 = the paper's)")
    K: int = Field(10, ge=1, le=1000, description="entity-name candidates retrieved for the start entity")
    rank_top: int = Field(3, ge=1, le=1000, description="IV-A ranking: at most this many of the K names the LLM keeps, "
                          "most likely first (Eq. 2–3 then weigh those)")
    # Abstention is our addition (the paper always answers). Any > 0 also turns on the blank-image and
    # instruction-override checks (kgqa.methods.vispath.abstain).
    abstain_below: float = Field(0.1, ge=0.0, le=1.0, description="abstain (no answer) when grounding is weaker "
                                 "than this: the start entity's link cosine to o, or the image's recognition "
                                 "score where the vision backend reports one; > 0 also abstains on a blank image "
                                 "and on a question that asks to override instructions; 0 = never (the paper's "
                                 "behaviour, --no-abstain)")
    first_cut: int = Field(200, ge=1, le=100_000, description="edges per frontier entity kept by the Cypher first cut "
                                                  "before exact Eq. 5")
    pre_cut: int = Field(2000, ge=1, le=100_000, description="edges per frontier entity ranked by relation score "
                                                 "before tail embeddings are read")
    expansion: Literal["firstcut", "exact"] = Field(
        "firstcut", description="firstcut (Cypher cut, then exact Eq. 5) or exact (every edge scored)")
    # How the LLM makes its two selections (IV-A candidate ranking, IV-C chain examination):
    # "generate" = a JSON list, as in the paper; "likelihood" = it scores each allowed option by
    # log-likelihood (ChatModel.choose, per token) and keeps the likeliest — for small local models.
    selection: Literal["generate", "likelihood"] = Field(
        "generate", description="generate (JSON lists, the paper's) or likelihood (score the allowed options)")
    verify_top: int = Field(3, ge=0, le=100, description="terminal selection: candidates verified against images")
    # Path search at scale (hubs with thousands of edges). The paper leaves these open. Its literal
    # reading is intent_fallback=question, edge_relation_weight=0, chain_relation_weight=0,
    # depth_fallback=dmax, chain_score=sbert, keep_label_match=false, answer_typing=false (Eq. 5 on
    # r ‖ e_t, Eq. 8 on the verbalised path, Eq. 3 by s_Q alone, no typing, q_i = Q
    # and D̂ = Dmax when the LLM step fails). The defaults are chosen graph-only on more-dev (docs/benchmarks.md);
    # intent_fallback, chain_score, chain_alignment and depth_fallback only act when an LLM step fails or
    # is switched off; keep_label_match and answer_typing always do.
    intent_fallback: Literal["question", "relations"] = Field(
        "relations", description="q_i when the intent step gives nothing: question (Q ‖ sketch step) or "
                                "relations (a non-LLM sketch: the catalogue relations the question's phrases "
                                "name; an edge's relation score is its best phrase match)")
    sketch_min_cos: float = Field(0.45, ge=-1.0, le=1.0, description="relations fallback: cosine between a "
                                  "question phrase and a relation name for the relation to count as named")
    sketch_skip_mentions: bool = Field(True, description="non-LLM sketch: words that name entities (capitalised) "
                                       "or point at the image ('the astronaut in this photo') are not matched "
                                       "against relations")
    sketch_aliases: bool = Field(True, description="non-LLM sketch: a question phrase may name a relation by "
                                 "its label or by any of its aliases (Wikidata5M's relation file)")
    chain_score: Literal["sbert", "sketch"] = Field(
        "sketch", description="σ when q_i is the non-LLM sketch: sbert (Eq. 8) or sketch (how well the path's "
                             "relations align one to one with the relation phrases of the question, mean "
                             "cosine; Eq. 8's σ breaks ties)")
    chain_alignment: Literal["mean", "coverage"] = Field(
        "coverage", description="chain_score=sketch: mean (the mean cosine of the path's relations with the phrases "
                            "they pair with) or coverage (their sum where ≥ sketch_min_cos, less coverage_edge_cost "
                            "per edge: a path that covers more of the relations the question names ranks first)")
    # With 15 paths kept per hop, a distractor edge whose relation matches a phrase weakly (≥ sketch_min_cos)
    # must not lengthen a path past the question: each edge costs this much.
    coverage_edge_cost: float = Field(0.5, ge=0.0, le=1.0, description="chain_alignment=coverage: what each edge "
                                      "costs; an edge whose phrase match is weaker does not pay for its hop")
    answer_typing: bool = Field(True, description="terminal selection: credit the paths whose entities have "
                                "the types the question names ('In which city …', 'the state where …'), read "
                                "from their classes and descriptions (ours; the paper has no typing); how much: "
                                "typing_weight")
    reading_order_weight: float = Field(0.001, ge=0.0, le=1.0, description="chain_score=sketch: the weight of the "
                                        "reverse reading order (the share of consecutive edges whose phrases come "
                                        "in reverse order in Q: English names the last hop first) added to the "
                                        "chain's alignment; 0.001 only breaks ties")
    # Typing is weighed against σ, not ranked first: typed-first (0) loses answers to distractors described
    # with the asked type nouns.
    typing_weight: float = Field(0.05, ge=0.0, le=10.0, description="answer_typing: 0 ranks typed paths first "
                                 "(before depth and σ); w > 0 adds w × the typing score to σ instead, so a clear "
                                 "σ gap outranks a type match")
    typing_unknown: float = Field(0.0, ge=0.0, le=1.0, description="answer_typing: the credit an entity without "
                                  "type evidence (no class, no description) gets for a type noun, as a share of a "
                                  "match (0: as a mismatch; 1: as a match)")
    keep_label_match: bool = Field(True, description="Eq. 3 without an image: a start candidate whose name or "
                                   "alias equals the question's mention is replaced only by another such candidate "
                                   "(ours; the paper replaces by s_Q alone)")
    compat_score: Literal["question", "sketch"] = Field(
        "question", description="s_Q of Eq. 2 (graph-aware validation of the start): question (the paper: best "
                             "cos(SBERT(r), SBERT(Q)) over the candidate's outgoing relations) or sketch (best "
                             "cosine between one of its relations and a relation phrase of Q, the non-LLM "
                             "sketch; the question when no phrase names a relation)")
    # dmax (the paper's fallback): with chains scored by coverage (chain_alignment) the depth follows from the
    # chains; the sketch's depth range stays an option.
    depth_fallback: Literal["dmax", "sketch"] = Field(
        "dmax", description="D̂ when the sketch step gives nothing: dmax (the paper's fallback) or sketch (the "
                            "number of relations the non-LLM sketch finds, the answer-type noun of 'which N' "
                            "an optional last hop; terminal selection then prefers paths of that length)")
    edge_relation_weight: float = Field(1.0, ge=0.0, le=1.0, description="Eq. 5: c = w·cos(SBERT(r), q_i) + "
                                        "(1−w)·cos(SBERT(r ‖ e_t), q_i); 0 = the paper's r ‖ e_t, 1 = relation "
                                        "first, the tail only breaks ties (also weighs the Cypher first cut)")
    chain_relation_weight: float = Field(1.0, ge=0.0, le=1.0, description="Eq. 8: σ = w·cos(SBERT(relation "
                                         "chain of p), target) + (1−w)·cos(SBERT(Verbalize(p)), target); 0 = the "
                                         "paper's verbalised path with entity names")
    # The learned relation-path retriever (ours, weakly supervised as in "Subgraph Retrieval Enhanced Model for
    # Multi-hop Knowledge Base Question Answering"): when the intent step gives nothing, its chain scores
    # replace the rules' Eq. 5 relation scores, Eq. 8's σ and terminal selection's order.
    # mixed: the rules stay as they are and the retriever's chain score is added to theirs, weighed by
    # learned_weight (Eq. 5 relation scores, Eq. 8 σ and so terminal selection's order by σ).
    path_scorer: Literal["auto", "reader", "rules", "learned", "mixed"] = Field(
        "auto", description="when no LLM examines the chains: reader (the chain reader of `kgqa train paths`, "
                            "which scores (question, relation chain): Eq. 8's σ, the paths kept per hop beside "
                            "the rules' and terminal selection, depth included), rules (the non-LLM sketch and its "
                            "scores), learned or mixed (the older bi-encoder retriever: in place of or added to the "
                            "rules' scores); auto = reader when its checkpoint fits the loaded KG, else rules (one "
                            "fallback line says why)")
    reader_checkpoint: str = Field("", description="path_scorer=reader: the checkpoint; empty = <data dir>/models/"
                                   "paths/chain-reader.safetensors when it exists, else the shipped one (data/demo/"
                                   "paths/, trained on the demo KG's generated questions)")
    reader_rules_weight: float = Field(32.0, ge=0.0, le=100.0, description="path_scorer=reader: σ = the "
                                      "reader's score + this × the rules' Eq. 8 σ (0: the reader alone)")
    reader_typing_weight: float = Field(1.0, ge=0.0, le=100.0, description="path_scorer=reader, answer_typing: "
                                        "terminal selection adds this × the typing score to the reader's σ")
    terminal_weights: str = Field("", description="path_scorer=reader: terminal selection's weights (kgqa train "
                                  "terminal); empty = <reader checkpoint>.terminal.json when fitted for that "
                                  "reader, else the fixed sum (reader + reader_rules_weight × rules + typing); "
                                  "fixed = the fixed sum always")
    ends_split: bool = Field(True, description="path_scorer=reader: terminal selection shares a relation "
                             "chain's score among the k entities it reaches from the start (−log k), so a chain "
                             "with one end outranks an equally read chain that is a k-way guess (terminal.py)")
    reader_beam: int = Field(15, ge=0, le=1000, description="path_scorer=reader: paths the reader keeps per hop (best "
                             "score), beside the M3_fallback paths the rules keep")
    learned_weight: float = Field(2.0, ge=0.0, le=10.0, description="path_scorer=mixed: the weight of the "
                                  "retriever's chain score (a cosine) added to the rules' scores")
    path_checkpoint: str = Field("", description="path_scorer=learned: the checkpoint; empty = <data dir>/models/"
                                 "paths/path-retriever.safetensors when it exists, else the shipped one "
                                 "(data/demo/paths/, trained on the demo KG's generated questions)")
    # Per-step ablation of the model calls (ours; the paper asks the model at every step). A step that is
    # off takes its documented fallback, exactly as in the graph-only setting (KGQA_CHAT_BACKEND=none), so
    # the gain or loss of each step is measured on its own (recorded as fallback code "off").
    llm_steps: str = Field("auto", description="model-asked steps, comma-separated, the others take their "
                           "fallback: expression, ranking, sketch, intent, chain, evidence, answerability, "
                           "final, verify; 'all' (the paper), 'none', or 'auto': all with a served LLM or your "
                           "own GGUF, none with the bundled SmolLM2-135M",
                           json_schema_extra={"client": True})
    no_graph_validation: bool = Field(False, description="ablation: take e_Q,1 as ranked (no Eq. 2–3)")
    no_visual_intent: bool = Field(False, description="ablation: score edges against Q instead of q_i")
    no_chain_pruning: bool = Field(False, description="ablation: keep paths by edge score (no σ, no LLM)")
    no_evidence_check: bool = Field(False, description="ablation: no answerability check; always Dmax hops")


    @field_validator("llm_steps")
    @classmethod
    def _known_steps(cls, v: str) -> str:
        parse_llm_steps(v)
        return v


#: VisPath's model-asked steps, in the order of Algorithm 1 (``llm_steps``)
LLM_STEPS = ("expression", "ranking", "sketch", "intent", "chain", "evidence", "answerability", "final", "verify")


#: ``llm_steps=auto`` with the bundled in-process SmolLM2-135M-Instruct: the steps that beat their
#: fallback on the demo set, live on llama.cpp (bench/llm_steps.py; README "Models"). Every step asked of
#: the 135M model scored below the graph-only floor, so none is asked: the CPU default is the floor.
CPU_LLM_STEPS = "none"


def resolve_llm_steps(spec: str, chat) -> str:
    """``auto`` → ``CPU_LLM_STEPS`` when ``chat`` is the bundled small in-process model (kgqa.models.local_chat,
    either runtime, no ``KGQA_LOCAL_LLM_GGUF`` of the user's), else ``all``."""
    if (spec or "").strip().lower() != "auto":
        return spec
    bundled_small = (getattr(chat, "backend", None) in ("local", "llamacpp")
                     and getattr(getattr(chat, "settings", None), "local_llm_gguf", "?") is None)
    return CPU_LLM_STEPS if bundled_small else "all"


def parse_llm_steps(spec: str) -> frozenset[str]:
    """``llm_steps`` as the set of steps that ask the model; ValueError naming an unknown step."""
    spec = (spec or "").strip().lower()
    if spec in ("all", "auto"):          # auto: resolved by resolve_llm_steps where the settings are known
        return frozenset(LLM_STEPS)
    if spec in ("", "none"):
        return frozenset()
    steps = {x.strip() for x in spec.split(",") if x.strip()}
    unknown = sorted(steps - set(LLM_STEPS))
    if unknown:
        raise ValueError(f"unknown step(s) {', '.join(unknown)} (known: {', '.join(LLM_STEPS)}, all, none, auto)")
    return frozenset(steps)
