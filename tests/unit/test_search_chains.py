"""``search_chains`` (the chains a training question's negatives are drawn from) on a graph of hubs: the facts of
at most ``FRONTIER`` entities are read per length, the generated walk's own entities always among them, every
chain still grows, and a small neighbourhood is searched whole, exactly as before the bound."""

from __future__ import annotations

from kgqa.training import path_supervision as ps


class HubGraph:
    """topic -member-> 40 groups; group g -has{g % 20}-> 60 items each; item -rel{k % 7}-> leaf{k % 7}: 20 chains
    of two facts, each reaching 120 items (50 kept), so 1,000 entities to search from at the third fact."""

    def __init__(self):
        self.facts: dict[str, list[tuple[str, str]]] = {"T": [("member", f"g{g}") for g in range(40)]}
        for g in range(40):
            self.facts[f"g{g}"] = [(f"has{g % 20}", f"i{g}_{k}") for k in range(60)]
            for k in range(60):
                self.facts[f"i{g}_{k}"] = [(f"rel{k % 7}", f"leaf{k % 7}")]
        self.read_sizes: list[int] = []
        self.read_ids: list[set[str]] = []

    def read(self, name, **kw):
        assert name == "grasp_training_facts"
        self.read_sizes.append(len(kw["ids"]))
        self.read_ids.append(set(kw["ids"]))
        return [{"head_id": h, "head_name": h, "relation_id": r, "tail_id": t, "tail_name": t}
                for h in kw["ids"] for r, t in self.facts.get(h, [])[:kw["per_entity"]]]


RELS = ["member"] + [f"has{j}" for j in range(20)] + [f"rel{k}" for k in range(7)]


def test_a_hub_level_reads_at_most_the_frontier_and_the_walks_entities_and_every_chain_grows():
    g = HubGraph()
    walk = ("g39", "i39_59", "leaf3")   # g19's 60 items fill the chain's 50 first: this item is beyond them
    nb = ps.search_chains(g, "T", RELS, 4, keep=frozenset(walk))
    assert g.read_sizes[:3] == [1, 40, ps.FRONTIER] and max(g.read_sizes) <= ps.FRONTIER   # of 1,000
    assert "i39_59" in nb.chains[("member", "has19")] and "i39_59" in g.read_ids[2]   # kept and searched from
    assert "leaf3" in nb.chains[("member", "has19", "rel3")]
    assert all(("member", f"has{j}", f"rel{k}") in nb.chains for j in range(20) for k in range(7))  # all grew



def test_expanded_takes_each_chains_entities_in_turn_beyond_the_limit():
    level = {("a",): {f"a{i}": "" for i in range(10)}, ("b",): {"b0": "", "b1": ""}, ("c",): {f"c{i}": "" for i in range(10)}}
    assert ps.expanded(level, limit=6) == ["a0", "b0", "c0", "a1", "b1", "c1"]
    assert ps.expanded(level, frozenset({"c9"}), limit=4) == ["c9", "a0", "b0", "c0"]
    assert len(ps.expanded(level, limit=100)) == 22    # under the limit: all of them, in order


def test_a_small_neighbourhood_is_searched_whole():
    g = HubGraph()
    g.facts["T"] = g.facts["T"][:3]                    # 3 groups: 180 items, under the frontier
    nb = ps.search_chains(g, "T", RELS, 3)
    assert g.read_sizes == [1, 3, 150]
    assert len(nb.chains[("member", "has0")]) == ps.ENTITIES_PER_CHAIN
