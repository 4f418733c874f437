"""VisPath: visual-intent-guided path reasoning over a multimodal KG.

"VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph Question
Answering" (arXiv 2609.20843), Algorithm 1, as the ``vispath`` method of ``kgqa.core.method``.

Read top to bottom, this module is Algorithm 1:

    IV-A  start entity    o = VLM(I, HEAD)                                    (Eq. 1)
                          SBERT(o) → entity-name vector index → LLM ranks → e_Q,1..K
                          s_Q,k = max_r cos(SBERT(r), SBERT(Q))               (Eq. 2)
                          replace e_Q,1 by e_Q,k* iff s_Q,k* − s_Q,1 > δ_k*    (Eq. 3)
    IV-C  sketch          (S_Q, D̂) = LLM(Q);  D̂ ← min(D̂, Dmax)
    loop  i = 1..Dmax
    IV-B    intent        q_i = VLM(I, Q, P(i−1))                             (Eq. 4)
            edge score    c_r,q_i = cos(SBERT(r ‖ e_t), SBERT(q_i)), top M1   (Eq. 5)
            extension     P_cand(i) = ∪ p ⊕ (end(p), r, e_t)                  (Eq. 6–7)
    IV-C    chain score   σ_p,i = cos(SBERT(Verbalize(p)), SBERT(Q ‖ S_Q ‖ q_i)), top M2  (Eq. 8)
            LLM examines the chains, keeps ≤ M3 (empty → top σ)  → P(i)
    IV-D    evidence      z_i = VLM(I, Q, P(i))                               (Eq. 9)
            (η_i, A_i) = VLM(I, Q, z_i)                                       (Eq. 10)
            stop at the first i with η_i = 1 and i ≥ D̂                        (Eq. 11)
    answer  from (I, Q, z*) when some hop was answerable (the last one is the fallback),
            else terminal selection over visited endpoints with visual verification,
            else from the image alone.

Every model call that must return JSON names a schema from ``kgqa.methods.vispath.prompts``;
when a model answers but not usably (``BadModelReply``: no usable reply after retries, a
declined recognition, the graph-only setting) the step takes the paper's documented
fallback and the run records it, with its code, in ``VisPathRun.fallbacks``. A model
that cannot be reached (``ModelUnavailable``) is never caught here: the question fails.
Graph access goes through ``kgqa.core.kg`` (entity linking, relation catalogue, embeddings)
and ``cypher/vispath_*.cypher``.

Interpretations where the paper is silent (each also noted where it happens):
* δ grows by 0.01 per rank (V-B): the threshold for a challenger at rank k is
  δ + 0.01·(k − 2), so rank 2 needs δ, rank 3 needs δ + 0.01, …
* Neo4j's ``vector.similarity.cosine`` returns (1 + cos)/2; we convert back to cos.
* A path does not revisit an entity it already passed through.
* Terminal selection ranks endpoints of all retained paths (Algorithm 1: "visited path
  entities"), closest length to D̂ first, then by the chain score σ they were retained with.
* Without an image, the topic mention is taken from the question text and the
  vision-conditioned steps are asked of the text LLM.
* Path search at scale (options with the paper's reading one ``-o`` away; bench/scale.py measures them
  on the demo KG and on the same KG buried in 200,000 distractors): ``intent_fallback``
  (q_i when the intent step fails: Q, or the relations the question's phrases name),
  ``edge_relation_weight`` (how relation and tail are weighed inside Eq. 5's r ‖ e_t, and in the
  Cypher first cut), ``chain_relation_weight`` (σ of Eq. 8 on the relation chain vs. the path
  with entity names; with the relations fallback q_i is the same at every hop, so σ of paths of
  different lengths compare under one target in terminal selection), ``M1_per_relation`` (at most
  this many of one relation's edges among an entity's M1, in the first cut and in exact Eq. 5).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kgqa.methods.vispath import prompts as P
from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.core.kg import KG, cos_from_neo4j
from kgqa.core.result import Answer, Fallback, PathEvidence, Step
from kgqa.core.method import BaseMethod

# ----------------------------------------------------------------------------- options


class VisPathOptions(BaseModel):
    """Hyperparameters (V-B defaults) and the four ablations of Table VI."""

    model_config = ConfigDict(extra="forbid")

    M1: int = Field(30, ge=1, description="edges kept per frontier entity by Eq. 5 (Eq. 5–7)")
    M2: int = Field(30, ge=1, description="paths kept by the chain score σ (Eq. 8)")
    M3: int = Field(3, ge=1, description="paths kept after LLM chain examination")
    # Diversity at hubs (ours; the paper's reading is 0): a hub's many edges of one relation (Berlin has
    # 89 "located in" facts among 200,000 distractors) tie under a relation-first Eq. 5 and would fill
    # all M1 slots, so the gold relation never reached Eq. 8 (bench/scale.py: buried EM 80 → 88).
    M1_per_relation: int = Field(5, ge=0, description="Eq. 5–7: of the M1 edges kept per frontier entity, at "
                                 "most this many per relation, so other relations reach Eq. 8 (0 = no cap, the "
                                 "paper's top-M1)")
    Dmax: int = Field(3, ge=1, le=8, description="maximum search depth")
    delta: float = Field(0.05, ge=0.0, lt=2.0, description="δ of Eq. 3 (graph-aware validation margin)")
    delta_step: float = Field(0.01, ge=0.0, lt=1.0, description="δ grows by this per candidate rank")
    K: int = Field(10, ge=1, description="entity-name candidates retrieved for the start entity")
    rank_top: int = Field(3, ge=1, description="IV-A ranking: at most this many of the K names the LLM keeps, "
                          "most likely first (Eq. 2–3 then weigh those)")
    # Abstention is our addition (the paper always answers): off by default, measured on the demo set.
    abstain_below: float = Field(0.0, ge=0.0, le=1.0, description="abstain (no answer) when grounding is weaker "
                                 "than this: the start entity's link cosine to o, or the image's recognition "
                                 "score where the vision backend reports one; 0 = never (the paper's behaviour)")
    first_cut: int = Field(200, ge=1, description="edges per frontier entity kept by the Cypher first cut "
                                                  "before exact Eq. 5")
    pre_cut: int = Field(2000, ge=1, description="edges per frontier entity ranked by relation score "
                                                 "before tail embeddings are read")
    expansion: Literal["firstcut", "exact"] = Field(
        "firstcut", description="firstcut (Cypher cut, then exact Eq. 5) or exact (every edge scored)")
    # How the LLM makes its two selections (IV-A candidate ranking, IV-C chain examination):
    # "generate" = a JSON list, as in the paper; "likelihood" = it scores each allowed option by
    # log-likelihood (ChatModel.choose, per token) and keeps the likeliest — for small local models.
    selection: Literal["generate", "likelihood"] = Field(
        "generate", description="generate (JSON lists, the paper's) or likelihood (score the allowed options)")
    verify_top: int = Field(3, ge=0, description="terminal selection: candidates verified against images")
    # Path search at scale (hubs with thousands of edges). The paper leaves these open. Its literal
    # reading is intent_fallback=question, edge_relation_weight=0, chain_relation_weight=0,
    # depth_fallback=dmax, chain_score=sbert, keep_label_match=false, answer_typing=false (Eq. 5 on
    # r ‖ e_t, Eq. 8 on the verbalised path, Eq. 3 by s_Q alone, no typing, q_i = Q
    # and D̂ = Dmax when the LLM step fails). The defaults are the variant bench/scale.py measured best,
    # graph-only, on the demo KG and on it buried in 200,000 distractors (EM 92 / 80 against the
    # literal reading's 28 / 4); intent_fallback, chain_score and depth_fallback only act when an
    # LLM step fails or is switched off; keep_label_match and answer_typing always do.
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
    answer_typing: bool = Field(True, description="terminal selection: rank first the paths whose entities have "
                                "the types the question names ('In which city …', 'the state where …'), read "
                                "from their descriptions (ours; the paper has no typing)")
    keep_label_match: bool = Field(True, description="Eq. 3 without an image: a start candidate whose name or "
                                   "alias equals the question's mention is replaced only by another such candidate "
                                   "(ours; the paper replaces by s_Q alone)")
    compat_score: Literal["question", "sketch"] = Field(
        "question", description="s_Q of Eq. 2 (graph-aware validation of the start): question (the paper: best "
                             "cos(SBERT(r), SBERT(Q)) over the candidate's outgoing relations) or sketch (best "
                             "cosine between one of its relations and a relation phrase of Q, the non-LLM "
                             "sketch; the question when no phrase names a relation)")
    depth_fallback: Literal["dmax", "sketch"] = Field(
        "sketch", description="D̂ when the sketch step gives nothing: dmax (the paper's fallback) or sketch (the "
                            "number of relations the non-LLM sketch finds, the answer-type noun of 'which N' "
                            "an optional last hop; terminal selection then prefers paths of that length)")
    edge_relation_weight: float = Field(1.0, ge=0.0, le=1.0, description="Eq. 5: c = w·cos(SBERT(r), q_i) + "
                                        "(1−w)·cos(SBERT(r ‖ e_t), q_i); 0 = the paper's r ‖ e_t, 1 = relation "
                                        "first, the tail only breaks ties (also weighs the Cypher first cut)")
    chain_relation_weight: float = Field(1.0, ge=0.0, le=1.0, description="Eq. 8: σ = w·cos(SBERT(relation "
                                         "chain of p), target) + (1−w)·cos(SBERT(Verbalize(p)), target); 0 = the "
                                         "paper's verbalised path with entity names")
    # Per-step ablation of the model calls (ours; the paper asks the model at every step). A step that is
    # off takes its documented fallback, exactly as in the graph-only setting (KGQA_CHAT_BACKEND=none), so
    # the gain or loss of each step is measured on its own (recorded as fallback code "off").
    llm_steps: str = Field("auto", description="model-asked steps, comma-separated, the others take their "
                           "fallback: expression, ranking, sketch, intent, chain, evidence, answerability, "
                           "final, verify; 'all' (the paper), 'none', or 'auto': all with a served LLM, the "
                           "steps measured to help (bench/llm_steps.py) with the bundled SmolLM2-135M")
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


# ----------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Edge:
    head_id: str
    head_name: str
    relation_id: str
    relation_name: str
    tail_id: str
    tail_name: str
    score: float = 0.0      # c_r,q_i (Eq. 5)
    hop: int = 0
    intent: str = ""        # q_Q^(i) that selected it


@dataclass
class ReasoningPath:
    start_id: str
    start_name: str
    edges: tuple[Edge, ...] = ()
    sigma: float | None = None   # σ_p,i (Eq. 8) at the hop it was retained

    @property
    def end_id(self) -> str:
        return self.edges[-1].tail_id if self.edges else self.start_id

    @property
    def end_name(self) -> str:
        return self.edges[-1].tail_name if self.edges else self.start_name

    @property
    def entity_ids(self) -> set[str]:
        return {self.start_id, *(e.tail_id for e in self.edges)}

    def extend(self, edge: Edge) -> "ReasoningPath":  # p ⊕ (end(p), r, e_t)
        return ReasoningPath(self.start_id, self.start_name, self.edges + (edge,))

    def relation_chain(self) -> str:  # the relations of p only
        return " → ".join(e.relation_name for e in self.edges)

    def verbalize(self) -> str:  # Verbalize(p)
        parts = [self.start_name]
        for e in self.edges:
            parts += [e.relation_name, e.tail_name]
        return " → ".join(parts)


@dataclass
class StartCandidate:
    id: str
    name: str
    retrieval: float = 0.0               # entity-name vector similarity to SBERT(o) (1.0 for a label match)
    label: bool = False                  # its name or an alias equals o (KG.label_matches)
    s_Q: float | None = None             # Eq. 2
    best_relation: str | None = None     # argmax r of Eq. 2


@dataclass
class HopRecord:
    hop: int
    intent: str
    candidates: int = 0                  # |P_cand(i)|
    chain_kept: int = 0                  # |P_chain(i)|
    retained: list[ReasoningPath] = field(default_factory=list)  # P(i)
    llm_selected: list[int] = field(default_factory=list)
    evidence: str = ""                   # z_i
    answerable: bool | None = None       # η_i (None: not checked)
    candidate_answer: str = ""           # A_i


@dataclass
class RelationSketch:
    """The non-LLM sketch of one question (``VisPath.relation_sketch``): what the question's phrases name."""

    intent: str = ""                      # the relations matched greedily, joined ("" when none matched)
    scores: dict[str, float] = field(default_factory=dict)   # relation id → best cos over the phrases
    depth: tuple[int, int] | None = None  # (lo, hi) hops: one per matched relation, type nouns optional
    phrases: list[tuple[int, int, str]] = field(default_factory=list)
    columns: dict[str, int] = field(default_factory=dict)    # relation id → column of ``sims``
    sims: np.ndarray | None = None        # phrases × relations cosines, a type noun's row halved

    def pairs(self, path: "ReasoningPath") -> list[tuple[int, int, float]]:
        """(edge index, phrase index, cos) pairs, edges and question phrases paired one to one (best pair
        first, a phrase's tokens used once; a type noun's match counts half, see ``mention_tokens``)."""
        order = sorted(((float(self.sims[a, self.columns[e.relation_id]]), k, a) for k, e in enumerate(path.edges)
                        if e.relation_id in self.columns for a in range(len(self.phrases))),
                       key=lambda x: (-x[0], x[1], x[2]))
        used_edges: set[int] = set()
        used_tokens: set[int] = set()
        out = []
        for sim, k, a in order:
            span = set(range(self.phrases[a][0], self.phrases[a][1]))
            if k in used_edges or span & used_tokens:
                continue
            used_edges.add(k)
            used_tokens |= span
            out.append((k, a, sim))
        return out

    def alignment(self, path: "ReasoningPath", pairs: list[tuple[int, int, float]] | None = None) -> float:
        """Mean over the path's edges of cos(relation, phrase) under ``pairs`` (computed when not given);
        an edge left without a phrase counts 0."""
        pairs = self.pairs(path) if pairs is None else pairs
        return sum(max(sim, 0.0) for _, _, sim in pairs) / max(1, len(path.edges))

    def reverse_reading(self, path: "ReasoningPath", pairs: list[tuple[int, int, float]] | None = None) -> float:
        """The share of consecutive paired edges whose phrase comes earlier in the question than the previous
        edge's: English names the last hop first ("the *capital* of the *state* where … was *born*",
        "which city is *twinned* with the *capital* of …"). 0.5 with fewer than two paired edges. Used only
        to break ties of ``alignment`` (an unordered pairing cannot tell capital → twinned from
        twinned → capital). ``pairs`` as for ``alignment``."""
        pos = [self.phrases[a][0] for _, a, _ in sorted(self.pairs(path) if pairs is None else pairs)]
        if len(pos) < 2:
            return 0.5
        return sum(b < a for a, b in zip(pos, pos[1:])) / (len(pos) - 1)


@dataclass
class VisPathRun:
    question: str
    answer: str | None = None
    answer_id: str | None = None
    start: StartCandidate | None = None
    start_candidates: list[StartCandidate] = field(default_factory=list)
    start_replaced: bool = False         # Eq. 3 fired
    expression: str = ""
    head: str = ""
    object_name: str = ""                # o (Eq. 1)
    sketch: list[str] = field(default_factory=list)   # S_Q
    depth_hat: int = 0                   # D̂ after min(D̂, Dmax)
    depth_predicted: bool = False        # D̂ came from the LLM (not the Dmax fallback)
    depth_range: tuple[int, int] | None = None   # depth_fallback="sketch": (lo, hi) from the relation sketch
    hops: list[HopRecord] = field(default_factory=list)
    selected_paths: list[ReasoningPath] = field(default_factory=list)
    sufficient: bool | None = None      # η at the hop whose evidence produced the answer
    stop_reason: str = ""
    fallbacks: list[Fallback] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    def fell_back(self, message: str, code: str = "empty") -> None:
        """Record a documented fallback (``code``: why; see kgqa.core.result.Fallback)."""
        self.fallbacks.append(Fallback(code, message))


# ----------------------------------------------------------------------------- engine


_WH = {"what", "which", "who", "whom", "whose", "where", "when", "why", "how", "in", "is", "was", "the", "of"}


def topic_mention_heuristic(question: str) -> str:
    """Fallback topic mention without an LLM: the longest run of capitalised words (not a leading wh-word)."""
    tokens = re.findall(r"[\w'’.-]+|,", question)
    runs, cur = [], []
    for i, tok in enumerate(tokens):
        cap = tok[:1].isupper() and not (i == 0 and tok.lower() in _WH)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        # a comma joins names ("Albany, New York") but not an apposition ("Michael Collins, the Apollo 11 astronaut")
        joins = tok.lower() in {"of", "de", "la", "the"} or (tok == "," and nxt[:1].isupper())
        if cap or (cur and joins):
            cur.append(tok)
        else:
            if cur:
                runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    best = max(runs, key=len, default=[])
    while best and (best[-1] in {",", "of", "de", "la", "the"}):
        best.pop()
    return " ".join(best).replace(" ,", ",") or question


_PHRASE_STOP = frozenset(
    "a an the of in on at to by for from with and or is was were be been are does did do has have had which "
    "what who whom whose where when why how this that these those it its as into there here shown pictured "
    "picture photo image depicted seen".split())


def question_tokens(question: str) -> list[str]:
    """The question's words as question_phrases counts them (case kept, trailing dots stripped)."""
    return [t.strip(".") for t in re.findall(r"[\w'’.-]+", question)]


def question_phrases(question: str, max_len: int = 3,
                     exclude: frozenset[int] | set[int] = frozenset()) -> list[tuple[int, int, str]]:
    """The question's word n-grams (1..max_len) that neither start nor end with a function word and
    touch no token in ``exclude``: (first token, end token, text), lower-cased — the candidates for
    relation mentions."""
    toks = [t.lower() for t in question_tokens(question)]
    out = []
    for n in range(1, max_len + 1):
        for i in range(len(toks) - n + 1):
            g = toks[i:i + n]
            if any(k in exclude for k in range(i, i + n)):
                continue
            if g[0] and g[-1] and g[0] not in _PHRASE_STOP and g[-1] not in _PHRASE_STOP:
                out.append((i, i + n, " ".join(g)))
    return out


_PARTICIPLE = re.compile(r"^(?:\w{3,}ed|born|built|written|made|known|held|drawn|painted|sung|given|won|sold|"
                         r"shown|seen|flown|run|founded|led)$")
_PREPOSITIONS = frozenset({"by", "with", "in", "at", "on", "from", "for", "into", "after", "to"})
_RELATIVE = frozenset({"that", "which", "who", "whom", "where", "whose"})
_DEICTIC = frozenset({"this", "these", "shown", "pictured", "depicted", "here"})
_PICTURE = frozenset({"photo", "photograph", "image", "picture", "shot", "scene", "view"})


def mention_tokens(question: str, has_image: bool) -> tuple[set[int], set[int]]:
    """Tokens that name or point at entities rather than relations, and answer-type tokens.

    Returns (excluded, answer_type) token indices (question_tokens order):
    * a capitalised word after the first names an entity ("Eiffel Tower", "U.S.", "Mozart"), not a
      relation, and an apposition after it (", the Apollo 11 astronaut,") describes that entity;
    * with an image, the noun phrase that points at it ("the astronaut in this photo", "the country
      whose flag is shown", "the patch of sky shown in this image") is the topic entity's type;
    * the noun right after "which"/"what" ("In which city …") is the answer's type, and a noun that heads
      a relative clause ("the company that builds …", "the state where …") or stands between an article
      and a name ("the novel Notre-Dame de Paris") the type of an entity on the way: such a type noun may name a hop ("In which country was the architect … born?" → country) or
      only the type of the entity the other relations reach ("In which city was … born?"), so it counts
      as an optional hop, and as half a match in ``RelationSketch.alignment``.
    """
    toks = question_tokens(question)
    low = [t.lower() for t in toks]
    excluded = {i for i, t in enumerate(toks) if i > 0 and t[:1].isupper()}
    # an apposition after a name describes that entity ("Michael Collins, the Apollo 11 astronaut, …")
    spans = [m.span() for m in re.finditer(r"[\w'’.-]+", question)]
    comma = [i > 0 and "," in question[spans[i - 1][1]:spans[i][0]] for i in range(len(spans))]  # before token i
    for i in range(1, len(toks)):
        if comma[i] and i - 1 in excluded and low[i] in ("the", "a", "an"):
            end = next((j for j in range(i + 1, len(toks)) if comma[j]), None)
            if end is not None:
                excluded.update(range(i, end))
    if has_image:
        m = next((i for i, t in enumerate(low) if t in _DEICTIC), None)
        if m is not None:
            s = max((i for i in range(m) if low[i] in ("the", "this", "these")), default=m)
            e = m
            if low[m] in ("this", "these"):          # "this launch photo"
                e = next((j for j in range(m + 1, min(m + 4, len(low))) if low[j] in _PICTURE), m)
            excluded.update(range(s, e + 1))
    answer_type = {i + 1 for i, t in enumerate(low[:-1])
                   if t in ("which", "what") and low[i + 1] not in _PHRASE_STOP and i + 1 not in excluded}
    answer_type |= {i for i, t in enumerate(low[:-1]) if i > 0 and low[i + 1] in _RELATIVE
                    and t not in _PHRASE_STOP and i not in excluded}
    # a reduced relative clause: "the city twinned with …", "the novel written by …" (article, noun,
    # participle, preposition): the noun types the entity the participle's relation reaches
    answer_type |= {i for i in range(1, len(low) - 2) if low[i - 1] in ("the", "a", "an")
                    and low[i] not in _PHRASE_STOP and i not in excluded
                    and _PARTICIPLE.match(low[i + 1]) and low[i + 2] in _PREPOSITIONS}
    # "the novel Notre-Dame de Paris", "the composer Mozart": a noun between an article and a name types it
    answer_type |= {i for i in range(1, len(low) - 1) if low[i - 1] in ("the", "a", "an") and i + 1 in excluded
                    and i not in excluded and low[i] not in _PHRASE_STOP and toks[i + 1][:1].isupper()}
    return excluded, answer_type


def type_nouns(question: str, has_image: bool) -> tuple[list[str], list[str]]:
    """The type nouns of ``mention_tokens``, lower-cased: (the answer's, after "which"/"what": "In which
    *city* …"; those of entities on the way: "the *state* where …", "the *novel* Notre-Dame de Paris")."""
    toks = [t.lower() for t in question_tokens(question)]
    _, typed = mention_tokens(question, has_image)
    answer = {i for i in typed if i > 0 and toks[i - 1] in ("which", "what")}
    return [toks[i] for i in sorted(answer)], [toks[i] for i in sorted(typed - answer)]


#: a description noun that implies a type noun a question asks for ("Rome, capital of Italy" is a city)
_TYPE_IMPLIES = {"capital": ("city",), "metropolis": ("city",), "commune": ("town",), "municipality": ("town",)}


def description_words(text: str | None) -> set[str]:
    """The lower-case words of an entity description and the types they imply (``_TYPE_IMPLIES``); no
    stemming, so "United States" names no state."""
    words = set(re.findall(r"\w+", (text or "").lower()))
    return words.union(*(_TYPE_IMPLIES.get(w, ()) for w in words))


def greedy_relation_matches(phrases: list[tuple[int, int, str]], sims: np.ndarray, min_cos: float,
                            limit: int) -> list[tuple[int, int, float]]:
    """(phrase index, relation index, cos) pairs, best pair first; a token span and a relation are used
    once; pairs below ``min_cos`` are ignored; at most ``limit``. ``sims`` is phrases × relations."""
    order = sorted(((float(sims[a, b]), a, b) for a in range(sims.shape[0]) for b in range(sims.shape[1])),
                   key=lambda x: (-x[0], x[1], x[2]))
    used_tokens: set[int] = set()
    used_rel: set[int] = set()
    out = []
    for s, a, b in order:
        if s < min_cos or len(out) >= limit:
            break
        span = set(range(phrases[a][0], phrases[a][1]))
        if b in used_rel or span & used_tokens:
            continue
        used_tokens |= span
        used_rel.add(b)
        out.append((a, b, s))
    return out


def cap_per_key(ranked: list, key, per_key: int, limit: int) -> list:
    """The first ``limit`` items of ``ranked`` (best first) with at most ``per_key`` of each ``key(item)``;
    per_key = 0: no cap (the plain top ``limit``)."""
    if per_key <= 0:
        return ranked[:limit]
    seen: dict = {}
    out = []
    for x in ranked:
        k = key(x)
        if seen.get(k, 0) < per_key:
            seen[k] = seen.get(k, 0) + 1
            out.append(x)
            if len(out) >= limit:
                break
    return out


def edge_scores(relation: np.ndarray, concat: np.ndarray, weight: float) -> np.ndarray:
    """Eq. 5 with the relation weighed in: w·cos(SBERT(r), q_i) + (1−w)·cos(SBERT(r ‖ e_t), q_i)."""
    return weight * relation + (1.0 - weight) * concat


def first_cut_relation_scores(rel_scores: dict[str, float], weight: float) -> dict[str, float]:
    """The ``$relation_scores`` for cypher/vispath_frontier_edges, whose cut ranks (rs + es) / 2 (rs: relation,
    es: stored tail-name cosine). Scaling rs by (1 + w)/(1 − w) makes that order the one of
    w·rs + (1 − w)·(rs + es)/2, so the cut weighs the relation as Eq. 5 does; w = 1 → the tail only breaks ties."""
    k = (1.0 + weight) / (1.0 - weight) if weight < 1.0 else 1000.0
    return {rid: k * s for rid, s in rel_scores.items()}


class VisPath(BaseMethod):
    """Algorithm 1 over a Neo4j Wikidata5M graph (the ``vispath`` method).

    From the ``Context``: ``graph`` (kgqa.core.graph.Graph), ``kg`` (shared KG access: SBERT cache,
    entity linking, relation catalogue), the models ``encoder`` (SBERT), ``chat`` (text LLM)
    and ``vision`` (VLM).
    """

    name: ClassVar[str] = "vispath"
    title: ClassVar[str] = ("VisPath: Visual-Intent-Guided Path Reasoning for Multimodal Knowledge Graph "
                            "Question Answering")
    arxiv: ClassVar[str | None] = "2609.20843"
    Options: ClassVar[type[BaseModel]] = VisPathOptions
    ablations: ClassVar[tuple[str, ...]] = ("no_graph_validation", "no_visual_intent", "no_chain_pruning",
                                            "no_evidence_check")

    def __init__(self, ctx, options: VisPathOptions | None = None):
        super().__init__(ctx, options)
        self.llm_steps = resolve_llm_steps(self.opt.llm_steps, self.chat)
        self._llm_steps = parse_llm_steps(self.llm_steps)
        self._drop: tuple[float, int] = (0.0, 0)
        self._hidden: list[str] = []
        # the non-LLM sketch of the question being answered (computed when a fallback first needs it)
        self._sketch: RelationSketch | None = None
        self._alias_forms: tuple[list[int], np.ndarray] | None = None   # (relation column, alias vectors)

    # ========================================================================= the method interface
    def solve(self, query) -> Answer:
        """``kgqa.core.method.Query`` in, ``Answer`` out (the pipeline adds seconds, cost and the trace)."""
        # incomplete-KG evaluation (--drop-edges): the topic entity's hidden facts, filtered in every expansion
        self._drop = (query.drop_edges, query.seed)
        self._hidden = []
        ans = to_answer(self.run(query.question, query.image, query.entity_id))
        ans.details["llm_steps"] = self.llm_steps
        return ans

    def render(self, answer: Answer) -> list[str]:
        """The VisPath-specific lines of ``kgqa ask``: start entity (recognised as), sketch and D̂."""
        d = answer.details
        start = f"{answer.start_entity_name} [{answer.start_entity_id}]" if answer.start_entity_id else "(none)"
        extra = f"  (recognised: {d.get('object_name')!r})" if d.get("object_name") else ""
        if d.get("start_replaced"):
            extra += "  (replaced e_Q,1 by graph-aware validation)"
        depth = (f"D̂={d['depth_range'][0]}–{d['depth_range'][1]} from the relations named"
                 if d.get("depth_range") and d["depth_range"][0] != d["depth_range"][1] else f"D̂={d.get('depth_hat')}")
        lines = [f"start entity: {start}{extra}",
                 f"sketch: {' → '.join(d.get('sketch', []))}  ({depth}, hops run {answer.hops})"]
        steps = d.get("llm_steps")
        if steps and steps != "all":
            lines.append(f"LLM steps: {steps} (-o llm_steps; the others took their graph-only fallback)")
        return lines

    # ========================================================================= Algorithm 1
    def run(self, question: str, image=None, entity_id: str | None = None) -> VisPathRun:
        question = (question or "").strip()
        if not question:
            raise InvalidInput("question is empty")
        o = self.opt
        run = VisPathRun(question=question)
        t0 = time.perf_counter()
        self._sketch = None

        # --- IV-A: starting entity e_S (Eq. 1–3) --------------------------------------
        if entity_id:
            run.start = self.given_start(entity_id)
        else:
            cands = self.rank_start_candidates(question, image, run)            # Eq. 1 + LLM ranking
            run.start_candidates = cands
            if cands:
                run.start, run.start_replaced = self.graph_aware_validation(question, cands, run,  # Eq. 2–3
                                                                            has_image=image is not None)
        run.timings["start_entity"] = time.perf_counter() - t0
        if o.abstain_below > 0 and not entity_id:                               # opt-in abstention (not the paper's)
            why = self.weak_grounding(image, run)
            if why:
                run.stop_reason = f"abstained: {why}"
                run.timings["total"] = time.perf_counter() - t0
                return run
        if run.start is not None and self._drop[0]:
            self._hidden = self.kg.hidden_facts(run.start.id, *self._drop)

        # --- line 1: sketch S_Q and predicted depth D̂ ---------------------------------
        run.sketch, d_hat = self.analyze_question(question, run, image is not None)
        run.depth_hat = min(d_hat, o.Dmax)                                      # D̂ ← min(D̂, Dmax)

        if run.start is None:
            run.fell_back("no start entity found", "graph")
            return self._answer_from_image(question, image, run, t0)

        # --- lines 2–9: hop loop --------------------------------------------------------
        paths = [ReasoningPath(run.start.id, run.start.name)]                  # P(0) = {(e_S)}
        z_star: str | None = None                                              # z* ← ⊥
        star_hop: HopRecord | None = None
        for i in range(1, o.Dmax + 1):
            th = time.perf_counter()
            q_i = self.hop_intent(question, image, paths, i, run)              # Eq. 4
            q_vec = self.embed([q_i])[0]
            cand = self.expand_frontier(paths, q_i, q_vec, i)                  # Eq. 5–7
            hop = HopRecord(hop=i, intent=q_i, candidates=len(cand))
            run.hops.append(hop)
            if not cand:
                run.fell_back(f"hop {i}: no outgoing edges to expand", "graph")
                run.timings[f"hop_{i}"] = time.perf_counter() - th
                break
            if o.no_chain_pruning:                                             # ablation: hop-level edge scores only
                paths = sorted(cand, key=lambda p: -p.edges[-1].score)[: o.M3]
                for p in paths:
                    p.sigma = p.edges[-1].score
                hop.chain_kept = len(cand)
            else:
                chain = self.chain_scores(cand, question, run.sketch, q_i)[: o.M2]   # Eq. 8, top M2
                hop.chain_kept = len(chain)
                paths = self.examine_chains(question, run.sketch, chain, hop, run)  # ≤ M3 → P(i)
            hop.retained = list(paths)

            z_i = self.evidence_statement(question, image, paths, run)          # Eq. 9
            hop.evidence = z_i
            if o.no_evidence_check:                                            # ablation: run to Dmax
                z_star, star_hop = z_i, hop
                run.timings[f"hop_{i}"] = time.perf_counter() - th
                continue
            eta, a_i = self.answerability(question, image, z_i, run)            # Eq. 10
            hop.answerable, hop.candidate_answer = eta, a_i
            run.timings[f"hop_{i}"] = time.perf_counter() - th
            if eta:
                z_star, star_hop = z_i, hop                                    # z* ← z_i (earlier: fallback)
                if i >= run.depth_hat:                                         # Eq. 11 stop rule
                    run.stop_reason = f"stop rule at hop {i} (answerable, D̂={run.depth_hat})"
                    break

        # --- lines 10–14: answer ------------------------------------------------------
        if z_star is not None and star_hop is not None:
            if not run.stop_reason:
                run.stop_reason = (f"evidence of hop {star_hop.hop} after the full depth budget"
                                   if o.no_evidence_check else
                                   f"fallback: answerable at hop {star_hop.hop} < D̂={run.depth_hat}"
                                   if star_hop.hop < run.depth_hat else
                                   f"answerable at hop {star_hop.hop}")
            run.answer = self.final_answer(question, image, z_star, star_hop, run)
            run.selected_paths = list(star_hop.retained)
            run.sufficient = bool(star_hop.answerable) if star_hop.answerable is not None else None
            run.answer_id = self.ground_answer(run.answer, run)
        else:
            self.terminal_selection(question, image, run)
            if run.answer is None:
                return self._answer_from_image(question, image, run, t0)
        run.timings["total"] = time.perf_counter() - t0
        return run

    def weak_grounding(self, image, run: VisPathRun) -> str | None:
        """Why the start entity is too weakly grounded to answer from (``abstain_below``), or None.

        Our interpretation of abstention (the paper has none): the grounding is the evidence every
        later hop stands on, so a declined or low-scoring recognition (a black image "is" Monaco at
        0.14), or a start entity whose name barely matches the object o (an injected "HACKED" links
        to nothing at cosine 0.3), ends the run without an answer instead of reasoning from it."""
        t = self.opt.abstain_below
        if image is not None:
            if any(f.message.startswith("recognition:") for f in run.fallbacks):
                return "the image was not recognised"
            rank = getattr(self.vision, "rank", None)                # the reference-image grounder's scores
            best = rank(image, 1) if callable(rank) else None
            if best and best[0][1] < t:
                return f"image recognised as {run.object_name!r} with score {best[0][1]:.2f} < {t}"
        if run.start is None:
            return "no start entity in the graph"
        if run.start.retrieval < t:
            return (f"start entity {run.start.name} [{run.start.id}] matches {run.object_name!r} "
                    f"with cosine {run.start.retrieval:.2f} < {t}")
        return None

    # ========================================================================= IV-A
    def given_start(self, entity_id: str) -> StartCandidate:
        row = self.kg.entity(entity_id)
        if row is None:
            raise InvalidInput(f"--entity {entity_id}: no such entity in the graph")
        return StartCandidate(row["id"], row["name"] or row["id"], retrieval=1.0)

    def rank_start_candidates(self, question: str, image, run: VisPathRun) -> list[StartCandidate]:
        """Visual-aware candidate ranking: HEAD → o = VLM(I, HEAD) (Eq. 1) → SBERT index → LLM ranks."""
        has_image = image is not None
        try:
            self._ask("expression")
            ref = self.chat.generate_json(P.build_referring_expression(question, has_image=has_image),
                                          P.ReferringExpression, system=P.VISPATH_SYSTEM, max_tokens=80)
            run.expression, run.head = ref.expression.strip(), ref.head.strip()
        except BadModelReply as e:
            run.fell_back("referring expression: no usable LLM reply; "
                          + ("HEAD='object'" if has_image else "capitalised-words heuristic"), e.code)
            run.expression = question if has_image else topic_mention_heuristic(question)
            run.head = "object"
        if has_image:
            try:
                run.object_name = self.vision.recognize(image, run.head).strip()     # Eq. 1
                why = "empty"
            except BadModelReply as e:
                run.object_name, why = "", e.code
            if not run.object_name:
                run.fell_back("recognition: vision model named nothing; using the referring expression", why)
                run.object_name = run.expression
        else:
            if run.expression and run.expression.lower() not in question.lower():
                # a small LLM may invent a mention; the question's own words are safer
                run.fell_back("topic mention not in the question; capitalised-words heuristic", "empty")
                run.expression = topic_mention_heuristic(question)
            run.object_name = run.expression
        retrieved = [StartCandidate(c.id, c.name, retrieval=c.cos, label=c.label)
                     for c in self.kg.link_entities(run.object_name, self.opt.K)]
        if not retrieved:
            return []
        try:
            self._ask("ranking")
            if self.opt.selection == "likelihood":
                ll = self.chat.choose(P.build_candidate_choice(question, run.expression, run.object_name),
                                      [" " + c.name for c in retrieved], per_token=True)
                ranked = [retrieved[k].name for k in sorted(range(len(retrieved)), key=lambda k: -ll[k])]
            else:
                names = [c.name for c in retrieved]
                ranked = self.chat.generate_json(
                    P.build_candidate_ranking(question, run.expression, run.object_name, names),
                    P.candidate_ranking_schema(tuple(names), min(self.opt.rank_top, len(names))),
                    system=P.VISPATH_SYSTEM, max_tokens=160).ranked
            why = "empty"
        except BadModelReply as e:
            ranked, why = [], e.code
        by_name: dict[str, StartCandidate] = {}
        for c in retrieved:
            by_name.setdefault(c.name.strip().lower(), c)
        out: list[StartCandidate] = []
        for name in ranked:
            c = by_name.get(str(name).strip().lower())
            if c is not None and c not in out:
                out.append(c)
        if not out:
            run.fell_back("candidate ranking: LLM kept no listed entity; vector-index order", why)
            out = retrieved
        return out          # the model keeps the candidates that fit (a filter); Eq. 2–3 weigh those

    def graph_aware_validation(self, question: str, cands: list[StartCandidate],
                               run: VisPathRun, has_image: bool = False) -> tuple[StartCandidate, bool]:
        """Eq. 2–3: keep e_Q,1 unless the best other candidate's s_Q exceeds it by more than δ_k*."""
        sketch = self.sketch_of(question, has_image) if self.opt.compat_score == "sketch" else None
        if sketch is not None and sketch.intent:
            # our reading: a relation the question names (by phrase) is what makes a candidate fit
            rows = self.graph.read("vispath_relation_compatibility_scored", ids=[c.id for c in cands],
                                   relation_scores=sketch.scores)
            sim = {r["id"]: (float(r["score"]), r["relation_name"]) for r in rows}
        else:
            q_vec = self.embed([question])[0]
            rows = self.graph.read("vispath_relation_compatibility", ids=[c.id for c in cands],
                                   question_vector=q_vec.tolist())
            sim = {r["id"]: (cos_from_neo4j(r["similarity"]), r["relation_name"]) for r in rows}
        for c in cands:                                                           # Eq. 2
            c.s_Q, c.best_relation = sim.get(c.id, (-1.0, None))                # -1: no outgoing relation
        if self.opt.no_graph_validation or len(cands) < 2:
            return cands[0], False
        rivals = range(1, len(cands))
        if self.opt.keep_label_match and not has_image and cands[0].label:
            # a question that names its entity ("the Statue of Liberty"): a candidate whose label is that
            # name is not replaced by one whose label is not (our guard; a recognised image keeps Eq. 3 whole)
            rivals = [k for k in rivals if cands[k].label]
            if not rivals:
                return cands[0], False
        k_star = max(rivals, key=lambda k: cands[k].s_Q)                         # argmax over 2 ≤ k ≤ K
        delta_k = self.opt.delta + self.opt.delta_step * (k_star - 1)            # δ grows 0.01 per rank
        if cands[k_star].s_Q - cands[0].s_Q > delta_k:                           # Eq. 3
            winner = cands[k_star]
            cands.insert(0, cands.pop(k_star))                                   # ẽ_Q,1 = e_Q,k*
            return winner, True
        return cands[0], False

    # ========================================================================= IV-C (sketch)
    def analyze_question(self, question: str, run: VisPathRun, has_image: bool = False) -> tuple[list[str], int]:
        try:
            self._ask("sketch")
            sk = self.chat.generate_json(P.build_question_analysis(question), P.QuestionSketch,
                                         system=P.VISPATH_SYSTEM, max_tokens=120)
            sketch = [s.strip() for s in sk.sketch if s and s.strip()]
            copied = (tuple(x.lower() for x in sketch) == P.QUESTION_ANALYSIS_EXAMPLE
                      and not all(w in question.lower() for w in ("architect", "born")))
            if sketch and not copied:
                run.depth_predicted = True
                return sketch, sk.depth
            why = "empty"
            if copied:
                run.fell_back("question analysis: the prompt's example was copied", "empty")
        except BadModelReply as e:
            why = e.code
        if self.opt.depth_fallback == "sketch":
            # D̂ from the non-LLM sketch (ours): one hop per relation the question names, the answer-type
            # noun ("which city") an optional last hop, so D̂ is a range (lo, hi)
            rng = self.sketch_of(question, has_image).depth
            if rng is not None:
                lo, hi = min(rng[0], self.opt.Dmax), min(rng[1], self.opt.Dmax)
                run.depth_range = (lo, hi)
                d = f"{lo}" if lo == hi else f"{lo}–{hi}"
                run.fell_back(f"question analysis: no valid sketch; S_Q = Q, D̂ = {d} from the relations "
                              "the question names", why)
                return [question], lo
        run.fell_back("question analysis: no valid sketch; S_Q = Q, D̂ = Dmax", why)
        return [question], self.opt.Dmax

    # ========================================================================= IV-B
    def hop_intent(self, question: str, image, paths: list[ReasoningPath], i: int, run: VisPathRun) -> str:
        """Eq. 4: q_Q^(i) = VLM(I, Q, P(i−1)); ablation "no visual intent" uses Q itself."""
        if self.opt.no_visual_intent:
            return question
        try:
            self._ask("intent")
            out = self._vlm_json(image, P.build_hop_intent(question, i, [p.verbalize() for p in paths]),
                                 P.HopIntent, max_tokens=60)
            intent = out.intent.strip()
            if intent:
                return intent
            why = "empty"
        except BadModelReply as e:
            why = e.code
        if self.opt.intent_fallback == "relations" and not run.depth_predicted:
            # Fallback (our choice; the paper has none) when the model gave no sketch S_Q either (a sketch
            # it gave names this hop's relation: below): the relations the question names, matched
            # phrase by phrase against the catalogue. Hop order is not guessed: every named relation
            # is sought at every hop, and an edge's relation score is its relation's best phrase match.
            sketch = self.sketch_of(question, image is not None)
            if sketch.intent:
                run.fell_back(f"hop {i} intent: no usable reply; the relations the question names", why)
                return sketch.intent
        # Fallback: the question, focused by the sketch step this hop should take.
        run.fell_back(f"hop {i} intent: no usable reply; Q ‖ sketch step", why)
        step = run.sketch[i - 1] if i - 1 < len(run.sketch) and run.sketch != [question] else ""
        return f"{step} {question}".strip()

    def sketch_of(self, question: str, has_image: bool) -> RelationSketch:
        """The question's relation sketch, computed once per question (``run`` resets it)."""
        if self._sketch is None:
            self._sketch = self.relation_sketch(question, has_image)
        return self._sketch

    def relation_sketch(self, question: str, has_image: bool = False) -> RelationSketch:
        """Non-LLM sketch: the relations the question's phrases name. ``intent`` joins the relations matched
        greedily (best pair first, each phrase span and each relation used once, cos ≥ sketch_min_cos, at
        most Dmax + 1); ``scores``: relation id → best cos(SBERT(r), SBERT(phrase)) over the phrases; ``depth``:
        (lo, hi) hops, one per matched relation, a type noun ("which N") an optional one. Empty when nothing
        matches.

        With sketch_skip_mentions, entity names and the words that point at the image are not phrases
        (``mention_tokens``); with sketch_aliases, a relation's aliases name it as well as its label."""
        rel = self.relations()
        ids = [rid for rid, (_, vec) in rel.items() if vec is not None]
        excluded, answer_type = mention_tokens(question, has_image)
        if not self.opt.sketch_skip_mentions:
            excluded = set()
        phrases = question_phrases(question, exclude=excluded)
        if not ids or not phrases:
            return RelationSketch()
        pv = self.embed([p[2] for p in phrases])
        sims = pv @ np.stack([rel[r][1] for r in ids]).T
        if self.opt.sketch_aliases:       # a relation is named by its label or any of its aliases
            cols, avecs = self.alias_forms(ids)
            if cols:
                asims = pv @ avecs.T
                for j, k in enumerate(cols):
                    sims[:, k] = np.maximum(sims[:, k], asims[:, j])
        is_type = [set(range(a, b)) <= answer_type for a, b, _ in phrases]
        weight = np.array([0.5 if t else 1.0 for t in is_type], dtype=np.float32)
        sketch = RelationSketch(phrases=phrases, columns={r: k for k, r in enumerate(ids)},
                                sims=sims * weight[:, None])
        picked = greedy_relation_matches(phrases, sims, self.opt.sketch_min_cos, self.opt.Dmax + 1)
        if not picked:
            return sketch
        core = len(picked) - sum(1 for a, _, _ in picked if is_type[a])
        sketch.depth = (max(1, core), max(1, core, len(picked)))
        sketch.intent = "; ".join(rel[ids[b]][0] for _, b, _ in picked)
        sketch.scores = {r: float(v) for r, v in zip(ids, sims.max(axis=0))}
        return sketch

    def alias_forms(self, ids: list[str]) -> tuple[list[int], np.ndarray]:
        """The relations' aliases as (column in ``ids`` per alias, alias SBERT vectors), built once: the
        catalogue is read once per process (kgqa.core.kg.KG), so its aliases are embedded once too."""
        if self._alias_forms is None:
            aliases = self.kg.relation_aliases()
            forms = [(k, a) for k, r in enumerate(ids) for a in aliases.get(r, [])
                     if len(a) > 2 and a.lower() not in _PHRASE_STOP]
            vecs = self.embed([a for _, a in forms]) if forms else np.zeros((0, 0), dtype=np.float32)
            self._alias_forms = ([k for k, _ in forms], vecs)
        return self._alias_forms

    def expand_frontier(self, paths: list[ReasoningPath], q_i: str, q_vec: np.ndarray,
                        hop: int) -> list[ReasoningPath]:
        """Eq. 5–7: top-M1 outgoing edges per frontier entity by c_r,q_i, then P_cand(i)."""
        frontier = list(dict.fromkeys(p.end_id for p in paths))
        kept = self.score_edges(frontier, q_vec, hop=hop, intent=q_i)
        cand: list[ReasoningPath] = []
        for p in paths:
            for e in kept.get(p.end_id, []):
                if e.tail_id not in p.entity_ids:                  # no revisits within one path
                    cand.append(p.extend(e))
        return cand                                                # |P_cand(i)| ≤ M1·|P(i−1)| (Eq. 7)

    def score_edges(self, frontier: Sequence[str], q_vec: np.ndarray, *, hop: int = 0, intent: str = "",
                    expansion: str | None = None, M1: int | None = None) -> dict[str, list[Edge]]:
        """Eq. 5 exact scores of (first-cut) outgoing edges; top M1 per frontier entity."""
        m1 = M1 or self.opt.M1
        mode = expansion or self.opt.expansion
        w = self.opt.edge_relation_weight
        rel = self.relations()
        if self._sketch is not None and self._sketch.intent and intent == self._sketch.intent:
            rel_scores = self._sketch.scores             # relations fallback: best phrase match per relation
        else:
            rel_scores = {rid: float(vec @ q_vec) for rid, (_, vec) in rel.items() if vec is not None}
        if mode == "exact":
            rows = self.graph.read("vispath_frontier_edges_all", frontier=list(frontier), hidden=self._hidden)
        else:
            rows = self.graph.read("vispath_frontier_edges", frontier=list(frontier),
                                   relation_scores=first_cut_relation_scores(rel_scores, w),
                                   intent=q_vec.tolist(), pre_cap=self.opt.pre_cut,
                                   cap=max(self.opt.first_cut, m1), hidden=self._hidden,
                                   per_relation=4 * self.opt.M1_per_relation)   # exact Eq. 5 picks among 4×
        if not rows:
            return {}
        rnames = [rel.get(r["relation_id"], (r["relation_id"], None))[0] for r in rows]
        rs = np.array([rel_scores.get(r["relation_id"], -1.0) for r in rows], dtype=np.float32)
        if w == 1.0 and mode != "exact":
            # relation first: the tail only breaks ties, by the first cut's stored tail-name cosine
            # (approx orders one relation's edges by it), so no "r ‖ e_t" needs encoding at a hub
            concat = np.array([r["approx"] for r in rows], dtype=np.float32)
        else:
            texts = [f"{rn} {r['tail_name'] or r['tail_id']}" for rn, r in zip(rnames, rows)]   # r ‖ e_t
            concat = self.embed(texts) @ q_vec                                                    # Eq. 5
        scores = edge_scores(rs, concat, w)
        by_head: dict[str, list[tuple[Edge, float]]] = {}
        for r, rn, s, c in zip(rows, rnames, scores, concat):
            by_head.setdefault(r["head_id"], []).append((
                Edge(r["head_id"], r["head_name"] or r["head_id"], r["relation_id"], rn, r["tail_id"],
                     r["tail_name"] or r["tail_id"], float(s), hop, intent), float(c)))
        # best c first; equal c (w = 1: one relation's edges) → the tail's r ‖ e_t score decides
        return {h: cap_per_key([e for e, _ in sorted(es, key=lambda x: (-x[0].score, -x[1], x[0].relation_id,
                                                                        x[0].tail_id))],
                               lambda e: e.relation_id, self.opt.M1_per_relation, m1)
                for h, es in by_head.items()}

    # ========================================================================= IV-C
    def chain_scores(self, cand: list[ReasoningPath], question: str, sketch: list[str],
                     q_i: str) -> list[ReasoningPath]:
        """Eq. 8: σ_p,i = cos(SBERT(Verbalize(p)), SBERT(Q ‖ S_Q ‖ q_i)); sorted, best first.

        With chain_relation_weight w > 0, σ = w·cos(SBERT(relation chain), ·) + (1−w)·(the above): the
        paper calls Verbalize(p) "a textual relation chain"; entity names in it let distractor tails that
        share words with Q outrank the right relations (our reading, measured in bench/scale.py)."""
        target = self.embed([" ".join([question, " → ".join(sketch), q_i])])[0]
        w = self.opt.chain_relation_weight
        sig = np.zeros(len(cand), dtype=np.float32)
        if w < 1.0:      # at w = 1 the verbalised paths (every distractor tail's name at a hub) need no encoding
            sig += (1.0 - w) * (self.embed([p.verbalize() for p in cand]) @ target)
        if w > 0:
            sig += w * (self.embed([p.relation_chain() for p in cand]) @ target)
        sketch = self._sketch
        if self.opt.chain_score == "sketch" and sketch is not None and sketch.intent and q_i == sketch.intent:
            # our reading for the graph-only case: the relation phrases of Q, aligned one to one with the
            # path's relations; ties broken first by the reverse reading order, then by Eq. 8's σ
            paired = [sketch.pairs(p) for p in cand]          # one pairing per path serves both scores
            sig = np.array([sketch.alignment(p, pr) + 1e-3 * sketch.reverse_reading(p, pr)
                            for p, pr in zip(cand, paired)], dtype=np.float64) + 1e-4 * sig
        for p, s in zip(cand, sig):
            p.sigma = float(s)
        return sorted(cand, key=lambda p: (-p.sigma, p.verbalize()))

    def examine_chains(self, question: str, sketch: list[str], chain: list[ReasoningPath],
                       hop: HopRecord, run: VisPathRun) -> list[ReasoningPath]:
        """LLM examines P_chain(i) as whole chains; keeps ≤ M3 by σ; empty → top-σ paths."""
        m3 = self.opt.M3
        try:
            self._ask("chain")
            if self.opt.selection == "likelihood":   # the M3 chains the LLM finds likeliest
                ll = self.chat.choose(P.build_chain_choice(question, sketch),
                                      [" " + p.verbalize() for p in chain], per_token=True)
                sel = [k + 1 for k in sorted(range(len(chain)), key=lambda k: -ll[k])[:m3]]
            else:
                sel = self.chat.generate_json(
                    P.build_chain_examination(question, sketch, [p.verbalize() for p in chain], m3),
                    P.chain_selection_schema(m3, len(chain)), system=P.VISPATH_SYSTEM, max_tokens=60).selected
            why = "empty"
        except BadModelReply as e:
            sel, why = [], e.code
        idx = sorted({n - 1 for n in sel if isinstance(n, int) and 1 <= n <= len(chain)})
        hop.llm_selected = [n + 1 for n in idx]
        if not idx:
            run.fell_back(f"hop {hop.hop} chain examination: LLM selected none; top chain scores", why)
            return chain[:m3]
        return [chain[n] for n in idx][:m3]          # idx ascending = σ order (chain is σ-sorted)

    # ========================================================================= IV-D
    def evidence_statement(self, question: str, image, paths: list[ReasoningPath], run: VisPathRun) -> str:
        """Eq. 9: z_i = VLM(I, Q, P(i)); fallback: the verbalised paths themselves."""
        verbal = [p.verbalize() for p in paths]
        try:
            self._ask("evidence")
            z = self._vlm_json(image, P.build_evidence_statement(question, verbal), P.EvidenceStatement,
                               max_tokens=120).statement.strip()
            if z:
                return z
            why = "empty"
        except BadModelReply as e:
            why = e.code
        run.fell_back("evidence statement: no usable reply; verbalised paths", why)
        return "; ".join(verbal)

    def answerability(self, question: str, image, z_i: str, run: VisPathRun) -> tuple[bool, str]:
        """Eq. 10: (η_i, A_i) = VLM(I, Q, z_i). No valid verdict counts as η_i = 0."""
        try:
            self._ask("answerability")
            out = self._vlm_json(image, P.build_answerability(question, z_i), P.Answerability, max_tokens=60)
        except BadModelReply as e:
            run.fell_back("answerability: no usable reply; η = 0", e.code)
            return False, ""
        ans = out.candidate
        return bool(out.answerable and ans), ans

    def final_answer(self, question: str, image, z_star: str, hop: HopRecord, run: VisPathRun) -> str:
        """Generate A from (I, Q, z*), kept path-faithful.

        The generated answer stands when it names an entity of the retained paths; otherwise the
        hop's candidate A_i when that does; otherwise the endpoint of P(i*) the chat model finds most
        likely as the answer (log-likelihood over the endpoint names), so a weak model's free text
        never replaces the graph evidence.
        """
        a = ""
        try:
            self._ask("final")
            a = self._vlm_json(image, P.build_final_answer(question, z_star), P.FinalAnswer,
                               max_tokens=40).answer.strip()
        except BadModelReply as e:
            run.fell_back("final answer: no usable reply", e.code)
        if a and self.ground_answer(a, run):
            return a
        if hop.candidate_answer and self.ground_answer(hop.candidate_answer, run):
            run.fell_back("final answer names no path entity; candidate answer A_i", "empty")
            return hop.candidate_answer
        ends = list(dict.fromkeys(p.end_name for p in hop.retained if p.edges))
        if not ends:
            return a or hop.candidate_answer
        run.fell_back("final answer names no path entity; likeliest retained endpoint", "empty")
        if len(ends) == 1:
            return ends[0]
        try:
            self._ask("final")
            ll = self.chat.choose(P.build_answer_choice(question, z_star), [" " + e for e in ends])
            return ends[int(np.argmax(ll))]
        except BadModelReply:
            return ends[0]

    def terminal_selection(self, question: str, image, run: VisPathRun) -> None:
        """No answerable hop: rank visited endpoint entities, verify the top ones against the image."""
        paths = [p for h in run.hops for p in h.retained if p.edges and p.end_id != run.start.id]
        if not paths:
            return
        # Rank: path length closest to D̂ first, then the chain score σ it was retained with (Eq. 8; with
        # chain pruning ablated, its edge score). Paths of one length come from one hop, scored under one intent; without a predicted D̂, σ of different hops are compared (a known weakness: σ values of different hops were scored under different intents q_i).
        # (The depth preference applies only when D̂ was predicted, not when it fell back to Dmax.)
        # With depth_fallback="sketch", the distance to the sketch's depth range (lo, hi) plays that part.
        def depth_gap(n: int) -> int:
            if run.depth_predicted:
                return abs(n - run.depth_hat)
            if run.depth_range is not None:
                lo, hi = run.depth_range
                return max(lo - n, n - hi, 0)
            return 0

        typing = self.path_typing(question, image is not None, paths) if self.opt.answer_typing else {}
        ranked_paths = sorted(paths, key=lambda p: (-typing.get(id(p), 0.0), depth_gap(len(p.edges)),
                                                    -(p.sigma if p.sigma is not None else -1.0)))
        # One candidate per endpoint entity, reached by its best-ranked path (an endpoint first seen
        # on a short path must still compete with the D̂-long path that reaches it).
        best: dict[str, ReasoningPath] = {}
        for p in ranked_paths:
            best.setdefault(p.end_id, p)
        ranked = list(best.values())
        top = ranked[: self.opt.verify_top]
        rest = ranked[self.opt.verify_top:]
        verdict: dict[str, bool] = {}
        if image is not None:
            with_images = {r["id"] for r in self.graph.read("vispath_entity_images", ids=[p.end_id for p in top])
                           if r["paths"]}
            for p in top:
                if p.end_id not in with_images:
                    continue
                try:
                    self._ask("verify")
                    verdict[p.end_id] = self.vision.generate_json(
                        image, P.build_candidate_check(question, p.end_name, p.verbalize()), P.CandidateCheck,
                        system=P.VISPATH_SYSTEM, max_tokens=20).consistent
                except BadModelReply as e:
                    run.fell_back(f"terminal verification of {p.end_id}: no usable reply; kept in rank", e.code)
        top = [p for p in top if verdict.get(p.end_id, True)] + [p for p in top if not verdict.get(p.end_id, True)]
        order = top + rest
        chosen = order[0]
        run.answer, run.answer_id = chosen.end_name, chosen.end_id
        run.selected_paths = order[: self.opt.M3]
        run.sufficient = False
        run.stop_reason = ("terminal selection (no hop judged answerable)" if not self.opt.no_evidence_check
                           else "terminal selection")

    def path_typing(self, question: str, has_image: bool, paths: list[ReasoningPath]) -> dict[int, float]:
        """Answer typing (ours; the paper has none): how well a path's entities have the types the question
        names, read from their descriptions. 1 when the endpoint's description has the answer's type noun
        ("In which *city* …"), plus the share of the other type nouns ("the *state* where …") found in the
        description of an entity after the start. Keyed by id(path); empty when the question names no type."""
        answer, along = type_nouns(question, has_image)
        if not answer and not along:
            return {}
        ids = list(dict.fromkeys(e.tail_id for p in paths for e in p.edges))
        words = {r["id"]: description_words(r["description"])
                 for r in self.graph.read("vispath_entity_descriptions", ids=ids)}
        out = {}
        for p in paths:
            score = 1.0 if answer and all(t in words.get(p.end_id, ()) for t in answer) else 0.0
            if along:
                seen = set().union(*(words.get(e.tail_id, set()) for e in p.edges))
                score += sum(t in seen for t in along) / len(along)
            out[id(p)] = score
        return out

    def _answer_from_image(self, question: str, image, run: VisPathRun, t0: float) -> VisPathRun:
        """Last resort: no reliable graph candidate — infer the answer from the image (or the question)."""
        try:
            self._ask("final")
            a = self._vlm_json(image, P.build_image_answer(question), P.FinalAnswer, max_tokens=40).answer.strip()
        except BadModelReply:
            a = ""
        run.answer = a or None
        run.sufficient = False
        run.stop_reason = "answered from the image alone" if a else "abstained: no graph evidence, no model answer"
        run.timings["total"] = time.perf_counter() - t0
        return run

    def ground_answer(self, answer: str | None, run: VisPathRun) -> str | None:
        """The KG entity the answer text names, among the entities of the retained paths (else None)."""
        names: dict[str, str] = {}
        for h in run.hops:
            for p in h.retained:
                for e in p.edges:
                    names.setdefault(e.tail_id, e.tail_name)
        return self.kg.ground_answer(answer, names)

    # ========================================================================= helpers
    def _ask(self, step: str) -> None:
        """Per-step ablation (``llm_steps``): a step that is off takes its fallback, as in the graph-only setting."""
        if step not in self._llm_steps:
            raise BadModelReply(f"{step}: model step switched off (llm_steps)", code="off")

    def _vlm_json(self, image, prompt: str, schema, max_tokens: int = 120):
        """A vision-conditioned step; without an image the text LLM takes it (kgqa ask "question")."""
        if image is None:
            return self.chat.generate_json(prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=max_tokens)
        return self.vision.generate_json(image, prompt, schema, system=P.VISPATH_SYSTEM, max_tokens=max_tokens)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """SBERT through the shared, cached encoder (kgqa.core.kg.KG.embed)."""
        return self.kg.embed(texts)

    def relations(self):
        """The relation catalogue: id → (name, stored SBERT embedding), read once (kgqa.core.kg.KG)."""
        return self.kg.relations()


# ----------------------------------------------------------------------------- as a kgqa Answer
def to_answer(run: VisPathRun) -> Answer:
    """A VisPathRun as the shared ``kgqa.core.result.Answer``: retained paths as PathEvidence."""
    evidence = []
    for rank, p in enumerate(run.selected_paths, 1):
        steps = [Step(head_id=e.head_id, head_name=e.head_name, relation_id=e.relation_id,
                      relation_name=e.relation_name, tail_id=e.tail_id, tail_name=e.tail_name, hop=k,
                      score=round(e.score, 4), note=e.intent)
                 for k, e in enumerate(p.edges, 1)]
        evidence.append(PathEvidence(steps=steps, score=None if p.sigma is None else round(p.sigma, 4), rank=rank))
    return Answer(
        question=run.question, answer=run.answer, method=VisPath.name, answer_id=run.answer_id,
        start_entity_id=run.start.id if run.start else None,
        start_entity_name=run.start.name if run.start else None,
        evidence=evidence, sufficient=run.sufficient, stop_reason=run.stop_reason,
        hops=len(run.hops), fallbacks=list(run.fallbacks),
        details={
            "expression": run.expression, "head": run.head, "object_name": run.object_name,
            "start_candidates": [{"id": c.id, "name": c.name, "retrieval": round(c.retrieval, 4),
                                  "s_Q": None if c.s_Q is None else round(c.s_Q, 4),
                                  "best_relation": c.best_relation} for c in run.start_candidates],
            "start_replaced": run.start_replaced, "sketch": run.sketch, "depth_hat": run.depth_hat,
            "depth_range": list(run.depth_range) if run.depth_range else None,
            "hops": [{"hop": h.hop, "intent": h.intent, "candidates": h.candidates, "chain_kept": h.chain_kept,
                      "llm_selected": h.llm_selected, "retained": [p.verbalize() for p in h.retained],
                      "evidence": h.evidence, "answerable": h.answerable, "candidate_answer": h.candidate_answer}
                     for h in run.hops],
            "timings": {k: round(v, 3) for k, v in run.timings.items()},
        },
    )
