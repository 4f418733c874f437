"""GraSP: graph-based soft prompting for multi-hop KGQA over an incomplete KG.

"Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft Prompting",
Section 4. Read top to bottom, this module is the method:

    topic    e_t: the given entity, else the KG entity the image shows (vision model), else the
             entity the question names (entity-name vector index)
    loop     t = 1..T (T = 3; the last round is forced to answer)
    4.1        G_t = Extract(e_t, q; k1, k2, l, cap)      per hop and direction: top-k1 relations by
                                                         cos(SBERT(r), SBERT(q)), per relation top-k2
                                                         neighbours by cos(SBERT(name), SBERT(q))
    4.2        P_t = FFN(GAT(G_t, q))                     one soft token per node (kgqa.gnn.encoder)
    4.3        S_t = LLM_select(P_t, triples(G_t), q)     the small soft-prompt LLM names entities,
                                                         kept only when they are nodes of G_t
               D_t = LLM_answer(q, S_1..t, paths)         the chat LLM: ANSWER (a, evidence) → stop,
                                                         or ENTITY e' → e_t+1 = the node of G_t named e'
    answer   a, grounded to a node id of the subgraphs

Ablations (Table 2): ``no_soft_prompt`` (LLM_select sees only the question and the candidate
names), ``triples_only`` (linearised triples, no soft prompt), ``text_soft_prompt`` (one soft
token per triple from its sentence embedding, no GNN); the default is the GAT soft prompt
with the triples. ``hops`` 1/2/3 is Table 4's setting.

Where the paper is silent, our reading (also noted where it happens):
* the triple cap is shared over the hops: hop h may take ceil(remaining / hops left) triples,
  the best by (relation score + neighbour score) / 2, and the next hop expands only the
  entities those triples reached; on a hub at most ``scan_cap`` neighbours per relation and
  direction are ranked;
* with the chain reader ranking (``reader``, ours): each hop takes first the facts that continue the relation
  chains the reader scores best, the subgraph reaches ``reader_hops`` (4) unless ``hops`` is set, at most
  ``max_nodes`` entities; the kind of answer asked for weighs in with the weight fitted for the reader;
* LLM_select's names are matched to subgraph nodes (exact, else SBERT cos ≥ 0.8); when none
  matches, the best-scored extracted entities stand in (fallback ``empty``);
* an ENTITY decision naming no node of the subgraph takes the best selected entity not yet
  visited as the next topic (fallback ``unresolved``); when there is none, the round answers;
* when LLM_answer gives no usable reply (``BadModelReply``: schema failure, graph-only
  setting) the answer is the first entity LLM_select named (fallback with the reply's code).

Graph access: ``cypher/grasp_*.cypher`` and the shared ``kgqa.core.kg.KG``. Incomplete-KG
evaluation (Section 5.5): ``Query.drop_edges`` hides that share of the topic entity's facts
in every read (``KG.hidden_facts``), never in the stored graph.

The pieces beside this module: ``options`` (the hyperparameters and ablations), ``subgraph``
(G_t, its triples and the encoders' input tensors), ``render`` (the ``Answer`` and the ``kgqa ask``
lines), ``training`` (Section 4.4, ``kgqa train grasp``).
"""

from __future__ import annotations

import math
import re
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel

from kgqa.methods.grasp import prompts as P
from kgqa.methods.grasp.options import GraSPOptions, default_checkpoint
from kgqa.methods.grasp.records import GraSPRun, Round
from kgqa.methods.grasp.render import ask_lines, to_answer, to_path_evidence
from kgqa.methods.grasp.subgraph import Fact, Subgraph, graph_tensors, triple_texts
from kgqa.core.errors import BadModelReply, InvalidInput
from kgqa.core.result import Answer, Fallback, PathEvidence
from kgqa.core.method import BaseMethod
from kgqa.models.heads.chain_reader import ReaderSlot

_CAPS = re.compile(r"(?:[A-Z][\w'’.-]*|\d[\w-]*)(?:\s+(?:of|de|la|the|del|von|van|upon|-)?\s*(?:[A-Z][\w'’.-]*))*")


# ----------------------------------------------------------------------------- the method


class GraSP(BaseMethod):
    """Section 4 over a Neo4j Wikidata5M graph (the ``grasp`` method).

    From the ``Context``: ``kg`` (SBERT cache, relation catalogue, entity linking, grounding,
    hidden facts), ``graph`` (``cypher/grasp_*``), the models ``softprompt`` (LLM_select),
    ``chat`` (LLM_answer) and ``vision`` (the topic entity of an image question).
    """

    name: ClassVar[str] = "grasp"
    title: ClassVar[str] = ("Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based "
                            "Soft Prompting")
    arxiv: ClassVar[str | None] = None
    Options: ClassVar[type[BaseModel]] = GraSPOptions
    ablations: ClassVar[tuple[str, ...]] = ("no_soft_prompt", "triples_only", "text_soft_prompt")

    def __init__(self, ctx, options: GraSPOptions | None = None, *, for_training: bool = False):
        super().__init__(ctx, options)
        self.hops_set = "hops" in self.opt.model_fields_set        # before a checkpoint's extraction fills it in
        self.softprompt = ctx.models.softprompt
        self.head = self.opt.head
        if self.head == "auto":       # the paper's soft prompt when a model that reads it is served
            served = getattr(self.settings, "softprompt_backend", "local") in ("openai", "vllm")
            self.head = "softprompt" if served or self.opt.variant != "gat" else "nodes"
        elif self.head == "nodes" and self.opt.variant != "gat":
            raise InvalidInput("grasp: head=nodes has no soft prompt; the ablations no_soft_prompt / triples_only / "
                               "text_soft_prompt need head=softprompt")
        self.variant = "nodes" if self.head == "nodes" else self.opt.variant
        self.checkpoint: Path | None = None
        if self.variant in ("gat", "text", "nodes"):
            self.checkpoint = (Path(self.opt.checkpoint).expanduser() if self.opt.checkpoint
                               else default_checkpoint(self.settings, self.variant))
            if self.variant == "nodes" and not self.opt.checkpoint and not self.checkpoint.is_file() \
                    and not for_training:
                from kgqa.methods.grasp.nodes import shipped_checkpoint

                self.checkpoint = shipped_checkpoint() or self.checkpoint   # the demo's, in a source checkout
            if not self.checkpoint.is_file() and not for_training:
                raise InvalidInput(
                    f"grasp: no trained {self.variant} encoder at {self.checkpoint} (train one with "
                    f"`kgqa train grasp{' --variant text' if self.variant == 'text' else ''}"
                    f"{' --head nodes' if self.variant == 'nodes' else ''}`, or pass "
                    f"-o checkpoint=PATH; the ablations triples_only / no_soft_prompt need none)")
            if self.variant == "nodes" and not for_training:
                from kgqa.methods.grasp.nodes import trained_extraction

                self.opt = trained_extraction(self.opt, self.checkpoint)      # the subgraphs the head learned on
        self._encoder = None
        self._kind: float | None = None
        self._split: float | None = None
        self._refused: str | None = None     # why the node head is not used (trained on another KG)
        self._aliases = None                 # relation chains: the relations' alias vectors (question_depth)
        self.reader = (ReaderSlot(self.kg, self.settings, self.opt.reader_checkpoint)
                       if self.variant == "nodes" and self.opt.ranker in ("auto", "reader") and not for_training
                       else None)

    # ========================================================================= the method interface
    def solve(self, query) -> Answer:
        return to_answer(self.run(query), self)

    def render(self, answer: Answer) -> list[str]:
        """The GraSP-specific lines of ``kgqa ask``: topic entity, LLM_select input, the rounds."""
        return ask_lines(answer)

    # ========================================================================= Section 4
    def run(self, query) -> GraSPRun:
        question = (query.question or "").strip()
        if not question:
            raise InvalidInput("question is empty")
        o = self.opt
        run = GraSPRun(question=question, has_image=query.image is not None)
        q_vec = self.kg.embed([question])[0]

        run.topic_id, run.topic_name, run.topic_how = self.topic_entity(query, run)
        if run.topic_id is None:
            run.stop_reason = "abstained: no topic entity found"
            return run
        hidden: list[str] = []
        if query.drop_edges:
            hidden = self.kg.hidden_facts(run.topic_id, query.drop_edges, query.seed)   # Section 5.5
            run.hidden_facts = len(hidden)

        topic_id, topic_name = run.topic_id, run.topic_name
        reader = self.chain_reader(run) if self.variant == "nodes" else None
        hops = o.reader_hops if reader is not None and not self.hops_set else o.hops
        visited = {topic_id}
        all_names: dict[str, str] = {topic_id: topic_name}
        evidence = run.evidence
        selected_names: list[str] = []
        for t in range(1, o.iterations + 1):
            forced = t == o.iterations
            t0 = time.perf_counter()
            sub = self.extract(topic_id, topic_name, q_vec, hidden, hops,                  # 4.1
                               reader if o.chain_extraction else None, question)
            rnd = Round(topic_id, topic_name, sub)
            run.rounds.append(rnd)
            rnd.seconds["extract"] = time.perf_counter() - t0
            all_names.update(sub.names)
            if not sub.facts:
                run.fell_back(f"round {t}: {topic_name} [{topic_id}] has no facts to extract", "graph")
                rnd.decision = "no facts"
                break
            t1 = time.perf_counter()
            if self.variant == "nodes":                        # the node-scoring head is LLM_select
                rnd.scores = self.score_nodes(sub, q_vec, visited, run, rnd.walks)
                if reader is not None:                # the chain reader ranks the nodes (ours)
                    from kgqa.methods.grasp.reader import reader_ranking

                    rnd.walks.clear()
                    rnd.scores = reader_ranking(reader, question, sub, rnd.scores, o.reader_head_weight,
                                                self.kg if o.ends_split or self.kind_weight() else None,
                                                self.kind_weight(), set(sum(self.kg.type_relations(), [])),
                                                self.split_units(), rnd.walks)
                    rnd.ranked_by = "chain reader"
                # the reader reads the kind asked for itself (reader_kind_weight): no word typing under it
                typing = (self.answer_typed(question, query.image is not None, rnd.scores)
                          if o.answer_typing and rnd.ranked_by != "chain reader" else None)
                if typing is not None:           # nodes typed as something else leave LLM_select's ranking
                    typed, kept = typing
                    if kept:
                        rnd.scores, rnd.typed = kept, (typed or None)   # no typed answer: the head decides
                    else:
                        rnd.typed = []               # every node is typed as something else: move on
                rnd.selected = [n for n, _ in rnd.scores[: o.max_selected]]
                rnd.seconds["encode"] = time.perf_counter() - t1
            else:
                soft = self.soft_prompt(sub, q_vec)                                        # 4.2
                rnd.soft_tokens = int(soft.shape[0])
                rnd.seconds["encode"] = time.perf_counter() - t1
                t2 = time.perf_counter()
                rnd.selected = self.select(question, sub, soft, rnd, run)                  # 4.3 LLM_select
                rnd.seconds["select"] = time.perf_counter() - t2
            if self.variant == "nodes" and not rnd.selected:
                run.fell_back(f"round {t}: no node of the subgraph besides the visited topics", "graph")
                rnd.decision = "no candidates"
                break
            for nid in rnd.selected:               # the chain a node was ranked by, else the shortest one
                chain = rnd.walks.get(nid) or sub.path_to(nid)
                if chain:
                    evidence.append(to_path_evidence(chain, sub.names, self.relation_names(), t, len(evidence) + 1,
                                                     start=sub.topic_id))
            selected_names += [sub.names[n] for n in rnd.selected if sub.names[n] not in selected_names]

            t3 = time.perf_counter()
            decision = (None if self.variant == "nodes" and not o.answer_llm           # the head decides
                        else self.decide(question, selected_names, evidence, forced, rnd, run))  # 4.3 LLM_answer
            rnd.seconds["answer"] = time.perf_counter() - t3
            if self.variant == "nodes":
                nxt = self.node_round(decision, sub, rnd, run, visited, forced)
                if nxt is None:
                    break
                rnd.next_topic = nxt
                topic_id, topic_name = nxt, sub.names[nxt]
                visited.add(nxt)
                continue
            if decision is None:                                # BadModelReply: first selected entity
                run.answer = sub.names[rnd.selected[0]] if rnd.selected else None
                run.stop_reason = f"fallback answer in round {t}"
                break
            if decision.decision == "ANSWER" or forced:
                run.answer = decision.answer or (sub.names[rnd.selected[0]] if rnd.selected else None)
                run.evidence_text = decision.evidence
                rnd.decision = "ANSWER"
                run.stop_reason = f"answered in round {t}" + (" (forced)" if forced and t > 1 else "")
                break
            rnd.decision, rnd.entity = "ENTITY", decision.entity
            nxt = self.resolve_next_topic(decision.entity, sub, rnd, visited, run)
            if nxt is None:                                    # nothing to move to: answer this round
                run.answer = sub.names[rnd.selected[0]] if rnd.selected else None
                run.stop_reason = f"round {t}: no next topic; first selected entity"
                break
            rnd.next_topic = nxt
            topic_id, topic_name = nxt, sub.names[nxt]
            visited.add(nxt)
        if run.answer and not run.answer_id:
            run.answer_id = self.kg.ground_answer(run.answer, all_names)
        return run

    # ========================================================================= the nodes head
    def node_round(self, decision, sub: Subgraph, rnd: Round, run: GraSPRun, visited: set[str],
                   forced: bool) -> str | None:
        """The answer (returns None) or the next topic after a nodes-head round (``nodes.node_round``)."""
        from kgqa.methods.grasp.nodes import node_round

        return node_round(self, decision, sub, rnd, run, visited, forced)

    def answer_typed(self, question: str, has_image: bool,
                     scores: list[tuple[str, float]]) -> tuple[list[str], list[tuple[str, float]]] | None:
        """Answer typing over the head's ranking: (the nodes whose type evidence (``KG.entity_types``: classes,
        description words) has every answer type noun of the question, best first; the ranking without the
        nodes whose evidence names none of them). An entity without type evidence is neither: it stays in
        the ranking and is no typed answer. None when the question names no answer type or no scored node
        has type evidence (the head's ranking then decides alone)."""
        from kgqa.core.question import type_nouns

        answer, _ = type_nouns(question, has_image)
        if not answer or not scores:
            return None
        types = self.kg.entity_types([n for n, _ in scores])
        if not types:
            return None
        typed = [n for n, _ in scores if n in types and all(t in types[n] for t in answer)]
        kept = [(n, p) for n, p in scores if n not in types or n in typed]
        return typed, kept

    def chain_reader(self, run: GraSPRun):
        """The chain reader when ranker is auto or reader and its checkpoint fits the loaded KG; else None, and the
        run records why once (one line, fallback code ``checkpoint``): the head ranks."""
        if self.reader is None:
            return None
        r = self.reader.get()
        if r is None and not any(f.code == "checkpoint" for f in run.fallbacks):
            run.fell_back(f"chain reader: {self.reader.error}; the node head ranks", "checkpoint")
        return r

    def kind_weight(self) -> float:
        """``reader_kind_weight``; auto: the kind weight over the reader weight that `kgqa train terminal` fitted
        for this reader on the KG's generated questions (VisPath's terminal selection reads the kind with them),
        else 0."""
        if self.opt.reader_kind_weight != "auto":
            return float(self.opt.reader_kind_weight)
        if self._kind is None:
            from kgqa.models.heads.chain_reader import fitted_weight_ratio

            self._kind = max(fitted_weight_ratio(self.reader.path, "kind") or 0.0, 0.0)
        return self._kind

    def split_units(self) -> float:
        """``ends_split``: what a chain reaching k nodes loses per log k, in the reader's logits (one log-unit of
        VisPath's terminal ranking with the weights fitted for the reader: ``chain_reader.ends_split_units``); 0
        when off."""
        if not self.opt.ends_split:
            return 0.0
        if self._split is None:
            from kgqa.models.heads.chain_reader import ends_split_units

            self._split = ends_split_units(self.reader.path)
        return self._split

    def score_nodes(self, sub: Subgraph, q_vec: np.ndarray, visited: set[str],
                    run: GraSPRun | None = None, walks: dict | None = None) -> list[tuple[str, float]]:
        """(node id, p) of G_t's nodes by the node-scoring head, best first, visited topics left out. A head
        trained on another KG (``nodes.load_head`` refuses it) is not used: the nodes are ranked by how well the
        relation chains reaching them read against the question (``nodes.chain_text_ranking``, relation names'
        vectors only, so any KG), and the run says why once (fallback code ``checkpoint``)."""
        from kgqa.methods.grasp.nodes import (HeadForAnotherKG, chain_text_ranking, node_probabilities,
                                              question_depth, ranked)

        if self._refused is None:
            try:
                head = self.gat_encoder()
            except HeadForAnotherKG as e:
                self._refused = str(e)
        if self._refused is not None:
            if run is not None and not any(f.message.startswith("node head:") for f in run.fallbacks):
                run.fell_back(f"node head: {self._refused}; the nodes are ranked by their relation chains' text",
                              "checkpoint")
            if run is not None and run.rounds:
                run.rounds[-1].ranked_by = "relation chains"
            depth = question_depth(self, run) if run is not None and self.opt.depth_weight else None
            return chain_text_ranking(sub, q_vec, self.kg, visited | {sub.topic_id}, self.opt.ends_split, walks,
                                      depth, self.opt.depth_weight)
        probs = node_probabilities(head, graph_tensors(self, sub, q_vec, with_paths=bool(head.path_features)))
        return ranked(sub.node_ids, probs, visited | {sub.topic_id})

    # ========================================================================= topic entity
    def topic_entity(self, query, run: GraSPRun) -> tuple[str | None, str | None, str]:
        """e_t: given (``--entity``), else recognised in the image, else named in the question.

        *interpretation*: the paper takes e_t as given (identified from the question). Without
        ``--entity``, the question's capitalised mentions (and the question itself) are linked
        through the entity-name vector index; a candidate whose name occurs verbatim in the
        question wins, else the highest cosine.
        """
        if query.entity_id:
            row = self.kg.entity(query.entity_id)
            if row is None:
                raise InvalidInput(f"--entity {query.entity_id}: no such entity in the graph")
            return row["id"], row["name"] or row["id"], "given"
        if query.image is not None:
            try:
                name = self.vision.recognize(query.image, "object").strip()
                if name:
                    c = self.kg.link_entities(name, 1)
                    if c:
                        return c[0].id, c[0].name, f"recognised in the image as {name!r}"
            except BadModelReply as e:
                run.fell_back(f"topic: the vision model recognised nothing ({e}); linking the question text",
                              e.code)
        mentions = [m.group(0).strip() for m in _CAPS.finditer(query.question)]
        mentions = [m for m in mentions if m.lower() not in {"what", "which", "who", "where", "when", "how",
                                                             "in", "is", "the", "of"}]
        low = query.question.lower()
        best: tuple[float, Any] | None = None
        for m in dict.fromkeys(mentions + [query.question]):
            for c in self.kg.link_entities(m, 5):
                verbatim = c.name and re.search(r"\b" + re.escape(c.name.lower()) + r"\b", low) is not None
                score = c.cos + (1.0 if verbatim else 0.0) + 0.01 * len(c.name or "") * verbatim
                if best is None or score > best[0]:
                    best = (score, c)
        if best is None:
            return None, None, ""
        return best[1].id, best[1].name, "linked from the question text"

    # ========================================================================= 4.1
    def relation_names(self) -> dict[str, str]:
        return {rid: name for rid, (name, _) in self.kg.relations().items()}

    def relation_scores(self, q_vec: np.ndarray) -> dict[str, float]:
        """cos(SBERT(relation name), SBERT(q)) from the catalogue's stored embeddings (P-ids are never embedded)."""
        out = {}
        for rid, (name, vec) in self.kg.relations().items():
            v = vec if vec is not None else self.kg.embed([name])[0]
            out[rid] = float(np.dot(v, q_vec))
        return out

    def extract(self, topic_id: str, topic_name: str, q_vec: np.ndarray, hidden: list[str], hops: int | None = None,
                reader=None, question: str = "") -> Subgraph:
        """G_t: ``hops`` rounds of ``grasp_neighbours`` from the topic, ≤ ``cap`` triples and ≤ ``max_nodes``
        entities in all. With ``reader`` (ours), each hop takes first the facts that continue a relation chain
        from the topic, the chains the reader scores best under ``question`` first (``reader.chain_order``)."""
        o = self.opt
        hops = hops or o.hops
        rs = self.relation_scores(q_vec)
        sub = Subgraph(topic_id, {topic_id: topic_name}, node_hop={topic_id: 0}, hops=hops)
        keys: set[str] = set()
        frontier = [topic_id]
        left = o.cap
        chain_of: dict[str, tuple[str, ...]] = {topic_id: ()}     # node → the chain that reached it forward
        for h in range(1, hops + 1):
            if not frontier or left <= 0:
                break
            share = math.ceil(left / (hops - h + 1))       # *interpretation*: the cap shared over the hops
            rows = self.graph.read("grasp_neighbours", frontier=frontier, relation_scores=rs,
                                   question=q_vec.tolist(), k1=o.k1, k2=o.k2, scan_cap=o.scan_cap, hidden=hidden)
            cands: list[tuple[Fact, str, str]] = []
            for r in rows:
                fid, nid = r["frontier_id"], r["neighbour_id"]
                head, tail = (fid, nid) if r["direction"] == "out" else (nid, fid)
                f = Fact(head, r["relation_id"], tail, h, (float(r["relation_score"]) + float(r["entity_score"])) / 2)
                cands.append((f, nid, r["neighbour_name"] or nid))
            cands.sort(key=lambda c: (-c[0].score, c[0].key))
            if reader is not None:
                from kgqa.methods.grasp.reader import chain_order

                cands = chain_order(reader, question, cands, chain_of)
            nxt: list[str] = []
            taken = 0
            for f, nid, nname in cands:
                if taken >= share:
                    break
                if f.key in keys or (nid not in sub.names and len(sub.names) >= o.max_nodes):
                    continue
                keys.add(f.key)
                sub.facts.append(f)
                taken += 1
                if nid not in sub.names:
                    sub.names[nid] = nname
                    sub.node_hop[nid] = h
                    nxt.append(nid)
                    if f.tail_id == nid and f.head_id in chain_of:
                        chain_of[nid] = chain_of[f.head_id] + (f.relation_id,)
                sub.node_score[nid] = max(sub.node_score.get(nid, -1.0), f.score)
            left -= taken
            frontier = nxt
        return sub

    # ========================================================================= 4.2
    def gat_encoder(self):
        """The trained GAT (or text) encoder, loaded once; its hidden size must match the soft-prompt LLM's."""
        if self._encoder is None and self.variant == "nodes":
            from kgqa.methods.grasp.nodes import load_head

            self._encoder, _ = load_head(self.checkpoint, self.kg.relations())
        if self._encoder is None:
            from kgqa.gnn import checkpoint as ckpt

            enc, info = ckpt.load(self.checkpoint, variant=self.variant)
            want = int(self.softprompt.hidden_size)
            if enc.llm_hidden != want:
                raise InvalidInput(f"{self.checkpoint}: made for a soft-prompt LLM of hidden size {enc.llm_hidden}, "
                                   f"but {getattr(self.softprompt, 'name', 'the model')} has {want}; retrain "
                                   f"with `kgqa train grasp`")
            enc.eval()
            self._encoder = enc
        return self._encoder

    def soft_prompt(self, sub: Subgraph, q_vec: np.ndarray):
        """P_t: (N, D) soft tokens (gat: one per node; text: one per triple; ablations: none)."""
        import torch

        if self.variant in ("none", "triples"):
            return torch.zeros((0, int(self.softprompt.hidden_size)))
        enc = self.gat_encoder()
        with torch.inference_mode():
            if self.variant == "text":
                return enc(torch.from_numpy(self.kg.embed(triple_texts(sub, self.relation_names()))))
            return enc(*graph_tensors(self, sub, q_vec, with_paths=bool(enc.path_features)))

    # ========================================================================= 4.3
    def select_prompt(self, question: str, sub: Subgraph) -> str:
        cands = [sub.names[n] for n in sub.node_ids if n != sub.topic_id]
        triples = None if self.variant == "none" else sub.triples_by_hop(self.relation_names(), self.opt.hops)
        return P.build_select(question, sub.names[sub.topic_id], triples, cands)

    def select(self, question: str, sub: Subgraph, soft, rnd: Round, run: GraSPRun) -> list[str]:
        """LLM_select: the small LLM names entities; only names of G_t's nodes (not the topic) are kept."""
        text = self.softprompt.generate(soft, self.select_prompt(question, sub), max_tokens=self.opt.select_tokens)
        rnd.select_raw = text
        names = {n: sub.names[n] for n in sub.node_ids if n != sub.topic_id}
        by_low: dict[str, str] = {}
        for nid, nm in names.items():
            by_low.setdefault(nm.strip().lower(), nid)
        out: list[str] = []
        for piece in P.parse_selection(text):
            nid = by_low.get(piece.lower()) or self.kg.ground_answer(piece, names)
            if nid and nid not in out:
                out.append(nid)
            if len(out) >= self.opt.max_selected:
                break
        if not out:
            run.fell_back(f"round {len(run.rounds)}: LLM_select named no entity of the subgraph; the best-scored "
                          "extracted entities", "empty")
            out = sorted(names, key=lambda n: (-sub.node_score.get(n, -1.0), n))[: self.opt.max_selected]
        return out

    def decide(self, question: str, selected: list[str], evidence: list[PathEvidence], forced: bool,
               rnd: Round, run: GraSPRun):
        """LLM_answer: ANSWER or ENTITY (forced: ANSWER). None when the reply is unusable (fallback recorded)."""
        prompt = P.build_answer(question, selected, [p.one_line() for p in evidence], forced=forced)
        try:
            reply = self.chat.generate_json(prompt, P.ForcedAnswer if forced else P.AnswerDecision,
                                            system=P.ANSWER_SYSTEM, max_tokens=160)
        except BadModelReply as e:
            run.fell_back(f"round {len(run.rounds)}: LLM_answer gave no usable reply ({e.code}); the first "
                          "entity LLM_select named", e.code)
            rnd.decision = "fallback"
            return None
        if reply.decision == "ANSWER" and not reply.answer:
            run.fell_back(f"round {len(run.rounds)}: LLM_answer answered nothing; the first selected entity", "empty")
        if reply.decision == "ENTITY" and not getattr(reply, "entity", ""):
            run.fell_back(f"round {len(run.rounds)}: ENTITY without a name; answering this round", "empty")
            return P.AnswerDecision(decision="ANSWER", answer="", evidence="")
        return reply

    def resolve_next_topic(self, entity: str, sub: Subgraph, rnd: Round, visited: set[str],
                           run: GraSPRun) -> str | None:
        """e_t+1: the subgraph node ENTITY names (never free text into Cypher); else the best unvisited selection."""
        names = {n: nm for n, nm in sub.names.items() if n not in visited}
        nid = self.kg.ground_answer(entity, names) if names else None
        if nid is not None:
            return nid
        alt = next((n for n in rnd.selected if n not in visited), None)
        run.fell_back(f"round {len(run.rounds)}: next topic {entity!r} is no entity of the subgraph; "
                      + (f"taking the selected {sub.names[alt]!r}" if alt else "answering now"), "unresolved")
        return alt


__all__ = ["GraSP", "GraSPRun", "Round"]
