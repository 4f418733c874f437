"""GraSP on the real Neo4j, the real SBERT encoder and the real SmolLM2 soft-prompt model.

KG: a small Wikidata5M-format graph written to a temporary folder (ids Q99100xx, P990xx so
nothing clashes with another fixture), loaded with the project's loader and deleted by id
afterwards. It has a hub: 300 people are "citizen of" the topic country, so the incoming
direction must be capped by k2 (and the scan by scan_cap).
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.conftest import assert_one_line_error, run_kgqa

REL = {"P99001": "capital", "P99002": "official language", "P99003": "currency", "P99004": "citizen of",
       "P99005": "twinned with", "P99006": "highest point", "P99007": "anthem", "P99008": "national animal",
       "P99009": "located on continent", "P99010": "river"}
ENT = {"Q9910001": "Vandoria", "Q9910002": "Merovan City", "Q9910003": "Vandorian language",
       "Q9910004": "Vandorian crown", "Q9910005": "Lake Ostra Town", "Q9910006": "Mount Peleg",
       "Q9910007": "Song of Vandoria", "Q9910008": "snow leopard", "Q9910009": "Eurasia",
       "Q9910010": "Vand River", "Q9910011": "Pelegrad"}
PEOPLE = {f"Q99102{i:02d}" if i < 100 else f"Q9910{i + 300}": f"Vandorian citizen number {i}" for i in range(300)}
FACTS = [("Q9910001", "P99001", "Q9910002"), ("Q9910001", "P99002", "Q9910003"), ("Q9910001", "P99003", "Q9910004"),
         ("Q9910001", "P99006", "Q9910006"), ("Q9910001", "P99007", "Q9910007"), ("Q9910001", "P99008", "Q9910008"),
         ("Q9910001", "P99009", "Q9910009"), ("Q9910001", "P99010", "Q9910010"),
         ("Q9910002", "P99005", "Q9910005"), ("Q9910006", "P99005", "Q9910011")] + \
        [(p, "P99004", "Q9910001") for p in PEOPLE]
TOPIC = "Q9910001"


@pytest.fixture(scope="module")
def kg_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("grasp_kg")
    (d / "wikidata5m_entity.txt").write_text("".join(f"{i}\t{n}\n" for i, n in {**ENT, **PEOPLE}.items()))
    (d / "wikidata5m_relation.txt").write_text("".join(f"{i}\t{n}\n" for i, n in REL.items()))
    (d / "wikidata5m_transductive_train.txt").write_text("".join(f"{h}\t{r}\t{t}\n" for h, r, t in FACTS))
    (d / "wikidata5m_transductive_valid.txt").write_text("")
    (d / "wikidata5m_transductive_test.txt").write_text("")
    return d


@pytest.fixture(scope="module")
def grasp_kg(load_kg, kg_dir):
    """The graph above loaded for this module; traces of questions starting 'grasp-it: ' go with it."""
    return load_kg(kg_dir, questions="grasp-it: ")


@pytest.fixture(scope="module")
def models(settings, grasp_kg):
    from kgqa.models import build_models

    return build_models(settings, grasp_kg)


def make(settings, graph, models, chat=None, softprompt=None, for_training=False, **opts):
    from kgqa.methods.grasp.algorithm import GraSP
    from kgqa.methods.grasp.options import GraSPOptions
    from kgqa.core.kg import KG
    from kgqa.core.method import Context

    m = SimpleNamespace(encoder=models.encoder, chat=chat or models.chat, vision=models.vision,
                        softprompt=softprompt or models.softprompt, meter=models.meter)
    return GraSP(Context(settings=settings, graph=graph, models=m, kg=KG(graph, models.encoder)),
                 GraSPOptions(**opts), for_training=for_training)


def extract(method, question, hidden=()):
    q = method.kg.embed([question])[0]
    return method.extract(TOPIC, "Vandoria", q, list(hidden))


# ------------------------------------------------------------------------------------------ 4.1 in Cypher
def test_extraction_ranks_relations_per_direction_and_caps_the_hub(settings, grasp_kg, models):
    m = make(settings, grasp_kg, models, triples_only=True, k1=3, k2=4, hops=1, cap=60)
    sub = extract(m, "What is the capital of Vandoria?")
    out = [f for f in sub.facts if f.head_id == TOPIC]
    inc = [f for f in sub.facts if f.tail_id == TOPIC]
    assert len({f.relation_id for f in out}) == 3                  # k1 relations, outgoing
    assert "P99001" in {f.relation_id for f in out}                # "capital" ranks first for this question
    assert {f.relation_id for f in inc} == {"P99004"}              # incoming: the hub's one relation ...
    assert len(inc) == 4                                           # ... capped at k2 of its 300 neighbours
    assert all(f.hop == 1 for f in sub.facts)


def test_extraction_second_hop_and_total_cap(settings, grasp_kg, models):
    m = make(settings, grasp_kg, models, triples_only=True, k1=8, k2=8, hops=2, cap=60)
    sub = extract(m, "Which town is twinned with the capital of Vandoria?")
    assert ("Q9910002", "P99005", "Q9910005") in {(f.head_id, f.relation_id, f.tail_id) for f in sub.facts}
    assert {f.hop for f in sub.facts} == {1, 2}
    small = make(settings, grasp_kg, models, triples_only=True, cap=7)
    capped = extract(small, "Which town is twinned with the capital of Vandoria?")
    assert len(capped.facts) <= 7 and sum(f.hop == 1 for f in capped.facts) == 4   # ceil(7/2) on hop 1
    one = make(settings, grasp_kg, models, triples_only=True, cap=3, hops=1)
    assert len(extract(one, "What is the capital of Vandoria?").facts) == 3


def test_scan_cap_bounds_the_hub_neighbours_ranked(settings, grasp_kg, models):
    m = make(settings, grasp_kg, models, triples_only=True, k1=8, k2=8, hops=1, scan_cap=5)
    inc = [f for f in extract(m, "Who is a citizen of Vandoria?").facts if f.tail_id == TOPIC]
    assert len(inc) == 5                                           # only 5 of 300 were read, all kept (k2 = 8)


def test_hidden_facts_are_invisible_and_the_stored_graph_is_untouched(settings, grasp_kg, models):
    m = make(settings, grasp_kg, models, triples_only=True, hops=1)
    before = grasp_kg.read("graph_counts")[0]
    hidden = m.kg.hidden_facts(TOPIC, 0.5, 7)
    assert len(hidden) == round(0.5 * len(FACTS[:8] + FACTS[10:]))  # facts touching the topic
    assert hidden == m.kg.hidden_facts(TOPIC, 0.5, 7)               # deterministic for a seed
    assert set(m.kg.hidden_facts(TOPIC, 0.1, 7)) <= set(hidden)     # nested as the share grows
    sub = extract(m, "What is the capital of Vandoria?", hidden)
    assert not {f.key for f in sub.facts} & set(hidden)
    assert grasp_kg.read("graph_counts")[0] == before


# ------------------------------------------------------------------------------------------ 4.2 → local LLM
def test_soft_prompts_reach_the_local_llm_and_the_loss_falls(settings, grasp_kg, models, tmp_path):
    torch = pytest.importorskip("torch")
    from kgqa.methods.grasp.training import TrainingExample, prepare_examples, soft_prompt_loss
    from kgqa.gnn.encoder import GraphSoftPromptEncoder
    from kgqa.gnn.train import TrainConfig, train

    m = make(settings, grasp_kg, models, for_training=True, hops=1, k1=3, k2=2, cap=6)
    ex = [TrainingExample("What is the capital of Vandoria?", TOPIC, "Merovan City", "Q9910002", "it")]
    prepared, dropped = prepare_examples(m, ex)
    assert dropped == 0 and prepared[0].inputs[0].shape[0] == prepared[0].nodes
    hidden = int(models.softprompt.hidden_size)
    torch.manual_seed(0)
    enc = GraphSoftPromptEncoder(384, 384, hidden, hidden_channels=16, heads=2, projector_hidden=32)
    rep = train(enc, prepared * 4, soft_prompt_loss(models.softprompt), variant="gat",
                checkpoint=tmp_path / "tiny.safetensors", config=TrainConfig(epochs=1, lr=5e-3, seed=0))
    assert rep.step_losses[-1] < rep.step_losses[0], rep.step_losses
    # the trained soft prompt is what generation reads: it changes the first-token distribution
    sp = enc(*prepared[0].inputs).detach()
    assert sp.shape == (prepared[0].nodes, hidden)


# ------------------------------------------------------------------------------------------ vLLM wire format
def test_vllm_prompt_embeds_request_carries_the_gat_soft_prompt(settings, grasp_kg, models, tmp_path):
    torch = pytest.importorskip("torch")
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.gnn.encoder import GraphSoftPromptEncoder
    from kgqa.core.method import Query
    from kgqa.models.openai_backend import OpenAISoftPrompt
    from tests.fakes.vllm_server import ContractServer

    srv = ContractServer()
    try:
        hidden = 32
        torch.manual_seed(0)
        ckpt.save(tmp_path / "g.safetensors", GraphSoftPromptEncoder(384, 384, hidden, hidden_channels=16, heads=2),
                  variant="gat")
        s = settings.model_copy(update={"openai_base_url": srv.url, "softprompt_model": "served-model",
                                        "openai_api_key": "EMPTY"})
        remote = OpenAISoftPrompt(s, embedder=lambda text: torch.zeros(len(text.split()), hidden), hidden_size=hidden)

        class Chat:
            name = "scripted"

            def generate_json(self, prompt, schema, **kw):
                return schema(decision="ANSWER", answer="Merovan City", evidence="capital")

        m = make(s, grasp_kg, models, chat=Chat(), softprompt=remote, checkpoint=str(tmp_path / "g.safetensors"),
                 hops=1, head="softprompt")
        srv.replies.append("Merovan City")
        a = m.answer(Query("What is the capital of Vandoria?", entity_id=TOPIC))
        req = [r for r in srv.requests if r["path"] == "/v1/completions"][-1]
        assert req["prompt"] == "" and req["model"] == "served-model"
        n_nodes = a.details["rounds"][0]["nodes"]
        sent = srv.last_embeds
        assert sent.shape[1] == hidden and sent.shape[0] > n_nodes
        assert sent[:n_nodes].abs().sum() > 0 and sent[n_nodes:].abs().sum() == 0   # soft tokens, then the text
        assert a.answer_id == "Q9910002" and not srv.violations
    finally:
        srv.httpd.shutdown()


# ------------------------------------------------------------------------------------------ CLI
def test_ask_without_a_trained_encoder_is_one_line_exit_2(grasp_kg, tmp_path):
    p = run_kgqa("ask", "--method", "grasp", "--entity", TOPIC, "-o", f"checkpoint={tmp_path}/none.safetensors",
                 "-o", "head=softprompt", "grasp-it: What is the capital of Vandoria?")
    assert_one_line_error(p, "no trained gat encoder", "kgqa train grasp", code=2)


def test_train_resume_then_ask_graph_only(grasp_kg, tmp_path):
    ck = tmp_path / "g.safetensors"
    qs = tmp_path / "train.jsonl"
    qs.write_text("\n".join(json.dumps({"question": q, "answer": a, "topic": {"id": TOPIC}}) for q, a in [
        ("What is the capital of Vandoria?", "Merovan City"), ("What is the currency of Vandoria?", "Vandorian crown")]))
    base = ["train", "grasp", "--head", "softprompt", "--data", str(qs), "--checkpoint", str(ck), "-o", "hops=1",
            "-o", "cap=6", "-o", "k2=2"]
    p = run_kgqa(*base, "--epochs", "1")
    assert p.returncode == 0, p.stderr
    assert "epoch 1" in p.stdout and ck.is_file() and ck.with_suffix(".loss.png").is_file()
    p = run_kgqa(*base, "--epochs", "2", "--resume")
    assert p.returncode == 0, p.stderr
    assert "resumed after epoch 1" in p.stdout and "epoch 2" in p.stdout
    p = run_kgqa("ask", "--method", "grasp", "--entity", TOPIC, "-o", f"checkpoint={ck}", "-o", "hops=1",
                 "-o", "head=softprompt", "grasp-it: What is the capital of Vandoria?", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    assert "round 1: Vandoria" in p.stdout and "not asked by design" in p.stdout


# ------------------------------------------------------------------------------------------ the nodes head
def test_train_nodes_head_on_generated_questions_then_ask_one_entity(grasp_kg, tmp_path):
    ck = tmp_path / "n.safetensors"
    qs = tmp_path / "train.jsonl"
    qs.write_text(json.dumps({"question": "What is the capital of Vandoria?", "answer": "Merovan City",
                              "topic": {"id": TOPIC}}) + "\n")
    p = run_kgqa("train", "grasp", "--head", "nodes", "--data", str(qs), "--examples", "40", "--epochs", "2",
                 "--checkpoint", str(ck), "-o", "hops=1")
    assert p.returncode == 0, p.stderr
    assert "examples/s" in p.stdout and ck.is_file() and ck.with_suffix(".loss.png").is_file()
    assert f"1 read from {qs}" in p.stdout and "generated from the loaded KG" in p.stdout   # --data and --examples
    p = run_kgqa("ask", "--method", "grasp", "--entity", TOPIC, "-o", f"checkpoint={ck}", "--json",
                 "grasp-it: What is the capital of Vandoria?", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    node_names = {s["id"]: s["name"] for r in a["details"]["rounds"] for s in r["scores"]}
    assert a["details"]["head"] == "nodes" and a["answer_id"] in node_names
    assert a["answer"] == node_names[a["answer_id"]]          # one entity, its own name, never a list
    assert a["details"]["options"]["hops"] == 1               # the subgraphs the head was trained on


def test_a_nodes_head_from_another_kg_is_not_used_and_the_run_says_why_once(grasp_kg, tmp_path):
    torch = pytest.importorskip("torch")
    from kgqa.gnn import checkpoint as ckpt
    from kgqa.gnn.encoder import GraphNodeScorer

    torch.manual_seed(0)
    ck = ckpt.save(tmp_path / "other.safetensors", GraphNodeScorer(384, 384, hidden_channels=8, heads=2),
                   variant="nodes", meta={"kg_fingerprint": "0123456789abcdef", "kg_relations": 3})
    p = run_kgqa("ask", "--method", "grasp", "--entity", TOPIC, "-o", f"checkpoint={ck}", "--json",
                 "grasp-it: What is the capital of Vandoria?", env={"KGQA_CHAT_BACKEND": "none"})
    assert p.returncode == 0, p.stderr
    ans = json.loads(p.stdout)
    why = [f for f in ans["fallbacks"] if f["code"] == "checkpoint" and f["message"].startswith("node head:")]
    assert len(why) == 1 and "trained on another KG" in why[0]["message"], ans["fallbacks"]
    assert "ranked by their relation chains" in why[0]["message"]
    assert str(ck) in why[0]["message"] and ans["answer"]
