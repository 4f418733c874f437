"""Questions phrased many ways from walks of 1–4 facts of the loaded KG: training data for the chain reader.

A question written by a person names each relation of its path in its own words and its own order:
"Where was the painter of the artwork in the image born?" walks *creator* then *place of birth*, names
the first relation by a noun inside the sentence and the last by a verb at its end. The generator
verbalises a walk of the loaded KG the same way, so that a model trained on it reads meaning, not one
template:

* the walk: 1–4 facts whose (head, relation) has exactly one tail (``UniqueOutFacts``), no entity twice,
  so the answer is unique;
* each relation by its label or one of its aliases (Wikidata5M's relation file: "place of birth",
  "birthplace", "born in"); a form that ends in a preposition ("born in", "designed by") is a verb form,
  the others are noun forms;
* the chain nested from the topic outwards, each level one of: "the R of X", "X's R" (after a name),
  "the R that X has", "the one X was V P" / "the <type> that X is V P" (verb forms), and for a regular
  passive ("owned by") the active voice, "the <type> that owned X";
* the last relation often fronted as the question's own verb or wh-word: "Where was X born?",
  "In which <type> is X located?", "Who designed X?" (regular passives only: no verb lexicon), "What is X V P?";
* the topic by its name or, half the time, as an image would point at it: "this <type>", "the <type>
  shown here", "the <type> in the image" (the type from its ``instance of`` class where the KG has one);
* an entity along the walk described by its type and a relative clause instead of a bare noun phrase
  ("the <type> that is the R of X"), and the answer's type named or not ("Which <type> is the R of X?").

Template families (``TRAIN_FAMILIES``, ``HELD_OUT_FAMILIES``): every construction above belongs to one family.
Training questions (``generate_walk_questions``' default) use only the training families; the held-out families
are never drawn for training, so a set phrased with them (``held_out=True``: ``bench/heldout.py`` writes one
for a loaded KG) measures phrasing the reader never saw:

* ``steps``: the walk told one relation a sentence, "Start from X. Its R1 is a <type>. What is the R2 of that
  <type>?";
* ``poss_chain``: possessives stacked, "X's R1's R2";
* ``cloze``: the question as a statement with a gap, "The R of X is which <type>?", "X's R is what?".

These are training data, never a yardstick (a yardstick is written elsewhere). The phrasing rules live
here and nowhere else: the reader learns from what they produce, and judges questions it never saw.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from kgqa.core.qa_examples import TrainingExample, walk_example, walk_source

PREPOSITIONS = ("in", "at", "on", "by", "to", "from", "with", "for", "of", "into", "under")
DEICTIC = ("this {n}", "the {n} shown here", "the {n} in the image", "the {n} in this photo",
           "the {n} pictured", "the {n} in the picture", "the {n} shown")
GENERIC_NOUNS = ("one", "entity", "thing", "place", "object", "subject")
FRAMES = ("What is {np}?", "Which entity is {np}?", "Name {np}.", "Tell me {np}.", "Who or what is {np}?",
          "What do we call {np}?", "Identify {np}.")


TRAIN_FAMILIES = frozenset({"of", "poss", "has", "verb", "active", "relative", "wh", "typed", "frame"})
HELD_OUT_FAMILIES = frozenset({"steps", "poss_chain", "cloze"})
STEP_OPENERS = ("Start from {np}.", "Take {np}.", "Consider {np}.", "Look at {np}.", "Begin with {np}.")


@dataclass
class WalkWeights:
    """How walks are drawn when not uniformly: a weight per topic entity and per relation id (a missing key
    weighs ``default``)."""

    topics: dict[str, float]
    relations: dict[str, float]
    default: float = 1.0

    def relation(self, rid: str) -> float:
        return self.relations.get(rid, self.default)

    def order(self, topics: list[str], seed: int) -> list[str]:
        """``topics`` in a seeded weighted order without replacement (each key ``u ** (1 / w)``, largest first:
        the weighted random sampling of Efraimidis and Spirakis), topics of weight 0 last."""
        r = random.Random(seed + 15485863)
        keys = {t: r.random() ** (1.0 / w) if (w := self.topics.get(t, self.default)) > 0 else -1.0 for t in topics}
        return sorted(topics, key=lambda t: -keys[t])


@dataclass
class WalkQuestion:
    example: TrainingExample
    relations: tuple[str, ...]        # the walk's relation ids, topic first
    entities: tuple[str, ...]         # the entity each fact reaches (the last is the answer)


PARTICIPLES = {"born", "built", "made", "located", "known", "held", "run", "written", "drawn", "set", "found",
               "buried", "based", "situated", "married", "named", "owned", "led", "shown", "kept", "taught"}


def _a(noun: str) -> str:
    """"a city", "an entity"."""
    return ("an " if noun[:1].lower() in "aeiou" and not noun.lower().startswith("one") else "a ") + noun


def _split_verb(form: str) -> tuple[str, str] | None:
    """"born in" → ("born", "in"); None for a noun form ("place of birth" ends in a noun)."""
    words = form.split()
    if len(words) >= 2 and words[-1].lower() in PREPOSITIONS:
        return " ".join(words[:-1]), words[-1].lower()
    return None


def _active(verb: str, prep: str) -> bool:
    """"owned by", "designed by": a regular passive whose past tense is the same word, so the question can be
    phrased in the active voice ("the company that owned X", "Who designed X?")."""
    return prep == "by" and len(verb.split()) == 1 and verb.lower().endswith("ed")


def _needs_be(verb: str) -> bool:
    """"born", "designed", "capital" take "is/was" before them; "shares border", "flows" do not."""
    first = verb.split()[0].lower()
    return (first in PARTICIPLES or first.endswith(("ed", "en")) or not first.endswith("s")
            or first.endswith("ss"))


class Phraser:
    """The words of one question (its own random generator, so the walks do not depend on them)."""

    def __init__(self, words: random.Random, names: dict[str, str], alias_of: dict[str, list[str]],
                 type_of: dict[str, str], held_out: bool = False):
        self.w = words
        self.names = names
        self.alias_of = alias_of
        self.type_of = type_of
        self.held_out = held_out          # phrase with the held-out families (never drawn for training)

    def form(self, rid: str) -> str:
        forms = [self.names.get(rid, rid)] + [a for a in self.alias_of.get(rid, []) if a and len(a) > 2
                                              and a.split()[0].lower() not in ("is", "has", "a", "an")]
        return self.w.choice(forms).strip()

    def noun(self, eid: str) -> str:
        t = self.type_of.get(eid)
        return t if t and self.w.random() < 0.8 else self.w.choice(GENERIC_NOUNS)

    def topic(self, eid: str, name: str) -> tuple[str, bool]:
        """The topic phrase, and whether it is a name (else it points at the image)."""
        if self.w.random() < 0.5:
            return name, True
        return self.w.choice(DEICTIC).format(n=self.noun(eid)), False

    def level(self, np: str, is_name: bool, rid: str, tail: str) -> str:
        """One level of nesting: the entity ``rid`` leads to from what ``np`` names."""
        f = self.form(rid)
        verb = _split_verb(f)
        if verb:
            v, p = verb
            if _active(v, p) and self.w.random() < 0.4:       # "owned by" → "the company that owned X"
                return f"the {self.noun(tail)} that {v} {np}"
            be = self.w.choice(("is ", "was ")) if _needs_be(v) else ""
            head = self.w.choice(("the " + self.noun(tail), "the one", "the " + self.noun(tail) + " that"))
            return f"{head} {np} {be}{v} {p}"
        r = self.w.random()
        if (self.held_out and r < 0.5 and np.split()[-1] not in PREPOSITIONS
                and not np.endswith(("here", "shown", "pictured", "image", "photo"))):
            return f"{np}'s {f}"                                    # poss_chain: "this painting's creator's …"
        if is_name and r < 0.2:
            return f"{np}'s {f}"
        if r < 0.35:
            return f"the {f} that {np} has"
        if not self.held_out and r < 0.5:                           # relative: the entity described by its type
            return f"the {self.noun(tail)} that is the {f} of {np}"
        return f"the {f} of {np}"

    def question(self, topic_np: str, is_name: bool, walk: list[dict]) -> str:
        """The whole question: the chain nested up to the last relation, which is fronted half the time; held out:
        the walk told step by step, or nested and asked as a statement with a gap."""
        if self.held_out and len(walk) > 1 and self.w.random() < 0.5:
            return self.steps(topic_np, walk)
        np, name = topic_np, is_name
        for f in walk[:-1]:
            np, name = self.level(np, name, f["relation_id"], f["tail_id"]), False
        last = walk[-1]
        f = self.form(last["relation_id"])
        verb = _split_verb(f)
        r = self.w.random()
        if self.held_out:
            return self.cloze(np, name, last)
        if verb and r < 0.6:
            v, p = verb
            n = self.noun(last["tail_id"])
            if _needs_be(v):
                be = self.w.choice(("is", "was"))
                choices = [f"What {be} {np} {v} {p}?", f"{p.capitalize()} which {n} {be} {np} {v}?",
                           f"Which {n} {be} {np} {v} {p}?"]
                if p in ("in", "at", "on"):
                    choices.append(f"Where {be} {np} {v}?")
                if _active(v, p):
                    choices += [f"Who {v} {np}?", f"Which {n} {v} {np}?"]
            else:
                choices = [f"What does {np} {v} {p}?", f"Which {n} does {np} {v} {p}?"]
                if v.endswith("s") and not v.endswith("ss"):
                    choices = [c.replace(f" {v} ", f" {v[:-1]} ") for c in choices]
            q = self.w.choice(choices)
        elif not verb and r < 0.5:
            q = self.w.choice((f"What is the {f} of {np}?", f"Which {f} does {np} have?",
                               f"What {f} does {np} have?", f"{np} has which {f}?",
                               f"Which {self.noun(last['tail_id'])} is the {f} of {np}?"))
        else:
            q = self.w.choice(FRAMES).format(np=self.level(np, name, last["relation_id"], last["tail_id"]))
        return q[0].upper() + q[1:]

    def cloze(self, np: str, is_name: bool, last: dict) -> str:
        """Held out (``cloze``): "The R of X is which <type>?", "X's R is what?"."""
        inner = self.level(np, is_name, last["relation_id"], last["tail_id"])
        q = self.w.choice((f"{inner} is which {self.noun(last['tail_id'])}?", f"{inner} is what?",
                           f"{inner}: which {self.noun(last['tail_id'])} is it?", f"{inner} is called what?"))
        return q[0].upper() + q[1:]

    def steps(self, topic_np: str, walk: list[dict]) -> str:
        """Held out (``steps``): one relation a sentence, each entity after the topic as "that <type>"."""
        out = [self.w.choice(STEP_OPENERS).format(np=topic_np)]
        subject = "it"
        for f in walk[:-1]:
            n = self.noun(f["tail_id"])
            rel = self.form(f["relation_id"])
            verb = _split_verb(rel)
            if verb:
                v, p = verb
                be = self.w.choice(("is ", "was ")) if _needs_be(v) else ""
                out.append(f"{subject} {be}{v} {p} {_a(n)}.")
            else:
                out.append(f"{'its' if subject == 'it' else subject + chr(39) + 's'} {rel} is {_a(n)}.")
            subject = f"that {n}"
        ask = self.form(walk[-1]["relation_id"])
        verb = _split_verb(ask)
        if verb and _needs_be(verb[0]):
            v, p = verb
            out.append(self.w.choice((f"What {self.w.choice(('is', 'was'))} {subject} {v} {p}?",
                                      f"Which {self.noun(walk[-1]['tail_id'])} {self.w.choice(('is', 'was'))} "
                                      f"{subject} {v} {p}?")))
        else:
            out.append(self.w.choice((f"What is the {ask} of {subject}?",
                                      f"Which {self.noun(walk[-1]['tail_id'])} is the {ask} of {subject}?",
                                      f"And the {ask} of {subject}?")))
        return " ".join(x[0].upper() + x[1:] for x in out)


def type_names(graph, kg, ids: list[str]) -> dict[str, str]:
    """Entity id → the name of its ``instance of`` class, where the KG has one (the first, by id)."""
    inst, _ = kg.type_relations()
    if not inst or not ids:
        return {}
    out: dict[str, str] = {}
    for r in graph.read("grasp_training_facts", ids=ids, relation_ids=inst, per_entity=1):
        if r["tail_name"]:
            out.setdefault(r["head_id"], r["tail_name"].lower())
    return out


def generate_walk_questions(graph, kg, n: int, seed: int, exclude_topics: set[str], *, max_hops: int = 4,
                            hop_weights: tuple[float, ...] = (0.2, 0.3, 0.3, 0.2),
                            type_share: float = 0.05, held_out: bool = False,
                            weights: WalkWeights | None = None) -> list[WalkQuestion]:
    """Up to ``n`` distinct questions from walks of 1..``max_hops`` single-tail facts (see the module text),
    phrased with the training families, or with ``held_out`` the held-out ones (a yardstick, never training);
    the walk's length is drawn by ``hop_weights``; a topic that cannot walk that far gives a shorter walk.
    ``instance of`` / ``subclass of`` facts (every entity has one) end a walk only with probability
    ``type_share`` and never lead on: otherwise a quarter of the questions would ask for a class.
    ``weights``: topics drawn in proportion to their weight (without replacement) and each fact by its relation's
    weight, instead of uniformly (``kgqa.training.walk_prior`` makes them)."""
    src = walk_source(graph, kg, seed, exclude_topics, aliases=True)
    rng, unique_out = src.rng, src.unique_out
    if weights is not None:
        src.topics = weights.order(src.topics, seed)

    def pick(facts: list[dict]) -> dict:
        if weights is None:
            return rng.choice(facts)
        return rng.choices(facts, weights=[weights.relation(f["relation_id"]) for f in facts])[0]
    inst, sub = kg.type_relations()
    typing = set(inst) | set(sub)

    def step(facts: list[dict], last: bool) -> list[dict]:
        if last and rng.random() < type_share:
            return facts
        return [f for f in facts if f["relation_id"] not in typing]
    hop_w = list(hop_weights[:max_hops])
    out: list[WalkQuestion] = []
    seen: set[tuple[str, str]] = set()
    passes = max(1, 4 * n // max(len(src.topics), 1) + 2) if src.topics else 0
    for _ in range(passes):
        before = len(out)
        batch: list[tuple[str, list[dict]]] = []
        for tid in src.topics:
            if len(out) + len(batch) >= n:
                break
            want = rng.choices(range(1, len(hop_w) + 1), weights=hop_w)[0]
            first = step(unique_out(tid), want == 1)
            if not first:
                continue
            walk = [pick(first)]
            visited = {tid, walk[0]["tail_id"]}
            while len(walk) < want and walk[-1]["relation_id"] not in typing:
                nxt = step([f for f in unique_out(walk[-1]["tail_id"]) if f["tail_id"] not in visited],
                           len(walk) + 1 == want)
                if not nxt:
                    break
                walk.append(pick(nxt))
                visited.add(walk[-1]["tail_id"])
            batch.append((tid, walk))
        types = type_names(graph, kg, list({e for t, w in batch for e in [t] + [f["tail_id"] for f in w]}))
        ph = Phraser(src.words, src.names, src.alias_of, types, held_out=held_out)
        for tid, walk in batch:
            topic_np, is_name = ph.topic(tid, walk[0]["head_name"] or tid)
            q = ph.question(topic_np, is_name, walk)
            if (tid, q) in seen:
                continue
            seen.add((tid, q))
            out.append(WalkQuestion(walk_example(q, tid, walk), tuple(f["relation_id"] for f in walk),
                                   tuple(f["tail_id"] for f in walk)))
        if len(out) >= n or len(out) == before:
            break
    return out[:n]


__all__ = ["generate_walk_questions", "WalkQuestion", "WalkWeights", "Phraser", "type_names", "TRAIN_FAMILIES",
           "HELD_OUT_FAMILIES"]
