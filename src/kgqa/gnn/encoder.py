"""GraSP's graph-based soft prompt (Section 4.2) and the text soft prompt of its ablation (Section 5.4).

From "Topology-Aware Reasoning over Incomplete Knowledge Graph with Graph-Based Soft
Prompting" (GraSP). The paper's text states the parts (an l-layer graph attention network
over the extracted subgraph, focused on the entities relevant to the question, and a
lightweight feed-forward network projecting every entity representation into the LLM's
embedding space) but its equations did not survive; what follows is our reading, each
choice marked *interpretation*:

    h_v^(0)  = W_in [x_v ; x_v ⊙ q ; 1[v = topic] ; onehot(hop_v) ; π_v] (question-conditioned input; the hop
                                                                    one-hot only with hop_features > 0, the
                                                                    path features π_v with path_features > 0)
    ε_r      = W_rel [r ; r ⊙ q]                                    (once per distinct relation r)
    e_uv     = ε_r(uv) ± w_dir                                      (+ forward, − reverse direction)
    h^(k)    = h^(k-1) + ELU(GATConv_k(h^(k-1), edge_index, e))     k = 1..l   (PyG GATConv, edge_dim)
    P        = W_2 tanh(W_1 h^(l) + b_1) + b_2                      (FFN projector, one soft token per node)

* x_v is the stored all-MiniLM-L6-v2 embedding of the entity's name, r that of the relation's
  name, q that of the question (all 384-d, L2-normalised). *interpretation*: the question enters
  through the element-wise products, so the attention coefficients of GATConv (which see
  h_u, h_v and e_uv) depend on how well an entity and a relation match the question.
* Every fact u -r-> v is passed in both directions (a learned direction vector is added to the
  forward edge and subtracted from the reverse one) so a 2-layer GAT reaches the topic's 2-hop
  neighbourhood whichever way the facts point.
* Relations are given once (``relation_emb``, R rows) and referenced per fact by ``edge_type``,
  as PyG's relational convolutions take them: a subgraph has far fewer distinct relations than
  facts, so the relation projection runs on R rows, not on 2E.
* One soft token per subgraph node, in node order (the topic first), as in the public code.

Shapes (N nodes, E facts, F = 384, H = hidden_channels, D = the LLM's hidden size):
    x (N, F), edge_index (2, E), edge_type (E,) long in [0, R), relation_emb (R, F), question (F,),
    topic_mask (N,) bool  ->  soft prompt (N, D)
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class GraphSoftPromptEncoder(nn.Module):
    r"""l-layer GAT (PyG ``GATConv`` with ``edge_dim``) + Linear–Tanh–Linear projector → soft prompt.

    Args:
        in_channels (int): size of a node's name embedding F (384 for all-MiniLM-L6-v2).
        edge_channels (int): size of a relation's name embedding (384).
        edge_hidden (int): size of the projected relation feature GATConv sees (``edge_dim``, default 32).
        llm_hidden (int): the soft-prompt LLM's hidden size D (576 for SmolLM2-135M).
        hidden_channels (int): GAT width H (default 128, the paper's public code).
        num_layers (int): GAT layers l (default 2, matching the 2-hop subgraph).
        heads (int): attention heads per layer; outputs are concatenated, H must divide by it.
        projector_hidden (int): hidden width of the projector (default 256).
        dropout (float): dropout on attention coefficients and between layers.
    """

    def __init__(self, in_channels: int = 384, edge_channels: int = 384, llm_hidden: int = 576, *,
                 hidden_channels: int = 128, num_layers: int = 2, heads: int = 4,
                 projector_hidden: int = 256, dropout: float = 0.0, edge_hidden: int = 32, hop_features: int = 0,
                 path_features: int = 0):
        super().__init__()
        import warnings

        with warnings.catch_warnings():       # PyG's import-time torch.jit.script deprecation notice, not ours
            warnings.filterwarnings("ignore", message=".*torch.jit.script.*", category=FutureWarning)
            from torch_geometric.nn import GATConv

        if hidden_channels % heads:
            raise ValueError(f"hidden_channels ({hidden_channels}) must be divisible by heads ({heads})")
        if num_layers < 1:
            raise ValueError("num_layers must be at least 1")
        self.in_channels = in_channels
        self.edge_channels = edge_channels
        self.llm_hidden = llm_hidden
        self.hidden_channels = hidden_channels
        self.num_layers = num_layers
        self.heads = heads
        self.projector_hidden = projector_hidden
        self.dropout = dropout
        self.edge_dim = edge_hidden
        self.hop_features = hop_features
        self.path_features = path_features
        self.lin_in = nn.Linear(2 * in_channels + 1 + hop_features + path_features, hidden_channels)
        self.lin_rel = nn.Linear(2 * edge_channels, edge_hidden)
        self.direction = nn.Parameter(torch.empty(edge_hidden))
        self.convs = nn.ModuleList(
            GATConv(hidden_channels, hidden_channels // heads, heads=heads, concat=True, dropout=dropout,
                    edge_dim=self.edge_dim, add_self_loops=True, fill_value="mean")
            for _ in range(num_layers))
        self.projector = nn.Sequential(nn.Linear(hidden_channels, projector_hidden), nn.Tanh(),
                                       nn.Linear(projector_hidden, llm_hidden))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        self.lin_in.reset_parameters()
        self.lin_rel.reset_parameters()
        nn.init.normal_(self.direction, std=0.1)
        for conv in self.convs:
            conv.reset_parameters()
        for m in self.projector:
            if isinstance(m, nn.Linear):
                m.reset_parameters()

    def config(self) -> dict:
        """Constructor arguments (stored beside a checkpoint's weights)."""
        return {"in_channels": self.in_channels, "edge_channels": self.edge_channels,
                "llm_hidden": self.llm_hidden, "hidden_channels": self.hidden_channels,
                "num_layers": self.num_layers, "heads": self.heads,
                "projector_hidden": self.projector_hidden, "dropout": self.dropout, "edge_hidden": self.edge_dim,
                **({"hop_features": self.hop_features} if self.hop_features else {}),
                **({"path_features": self.path_features} if self.path_features else {})}

    def node_states(self, x: Tensor, edge_index: Tensor, edge_type: Tensor, relation_emb: Tensor,
                    question: Tensor, topic_mask: Tensor, node_hop: Tensor | None = None,
                    node_path: Tensor | None = None) -> Tensor:
        """The GAT's node representations h^(l), shape (N, H). ``node_path`` (N, path_features): how well the
        relation chain reaching each node matches the question (read only with path_features > 0)."""
        q = question.reshape(1, -1)
        parts = [x, x * q, topic_mask.to(x.dtype).reshape(-1, 1)]
        if self.hop_features:         # one-hot of the hop at which extraction reached the node (the last: or more)
            hop = node_hop if node_hop is not None else (~topic_mask).long()
            parts.append(nn.functional.one_hot(hop.clamp(0, self.hop_features - 1), self.hop_features).to(x.dtype))
        if self.path_features:
            parts.append(self._path(x, node_path))
        h = self.lin_in(torch.cat(parts, dim=-1))
        rel = self.lin_rel(torch.cat([relation_emb, relation_emb * q], dim=-1))      # (R, edge_hidden), once
        fwd = rel[edge_type]
        # both directions of every fact; the direction vector tells them apart
        ei = torch.cat([edge_index, edge_index.flip(0)], dim=1)
        e = torch.cat([fwd + self.direction, fwd - self.direction], dim=0)
        for conv in self.convs:
            h = h + nn.functional.elu(conv(h, ei, e))
            h = nn.functional.dropout(h, p=self.dropout, training=self.training)
        return h

    def _path(self, x: Tensor, node_path: Tensor | None) -> Tensor:
        if node_path is None:
            return x.new_zeros((x.shape[0], self.path_features))
        if tuple(node_path.shape) != (x.shape[0], self.path_features):
            raise ValueError(f"node_path has shape {tuple(node_path.shape)}, expected ({x.shape[0]}, "
                             f"{self.path_features})")
        return node_path.to(x.dtype)

    def forward(self, x: Tensor, edge_index: Tensor, edge_type: Tensor, relation_emb: Tensor, question: Tensor,
                topic_mask: Tensor, node_hop: Tensor | None = None, node_path: Tensor | None = None) -> Tensor:
        """Soft prompt: one D-dimensional token per node, shape (N, D)."""
        return self.projector(self.node_states(x, edge_index, edge_type, relation_emb, question, topic_mask,
                                               node_hop, node_path))

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.in_channels}, edge={self.edge_channels}, "
                f"hidden={self.hidden_channels}, layers={self.num_layers}, heads={self.heads}, "
                f"llm_hidden={self.llm_hidden})")


class GraphNodeScorer(GraphSoftPromptEncoder):
    r"""A node-scoring head on the same question-conditioned GAT: one logit per subgraph node.

    *interpretation* (not in the paper): when no soft-prompt LLM capable of reading the graph
    tokens is served, LLM_select is replaced by this head. It keeps ``node_states`` (the l-layer
    GAT above) and swaps the projector's output for a single logit: the projector becomes
    Linear(H, P)–Tanh–Linear(P, 1). Trained with cross-entropy over the nodes of the extracted
    subgraph (the topic masked out), no LLM in the loop.

    With ``path_features`` P > 0 the node's path features π_v (how well the relation chain that reached it
    in extraction matches the question; ``kgqa.methods.grasp.subgraph.path_features``) enter the GAT's input
    and, as a skip, the head itself: Linear(H + P, P')–Tanh–Linear(P', 1) over [h_v^(l) ; π_v], so a chain
    that matches the question can outrank the chain's intermediate entity without passing through the GAT.
    A checkpoint without ``path_features`` in its config loads as before (P = 0).

    Shapes: the GAT's inputs (+ node_path (N, P)) -> scores (N,) (raw logits; the caller masks the topic
    and softmaxes).
    """

    def __init__(self, in_channels: int = 384, edge_channels: int = 384, llm_hidden: int = 1, *,
                 hidden_channels: int = 128, num_layers: int = 2, heads: int = 4, projector_hidden: int = 128,
                 dropout: float = 0.0, edge_hidden: int = 32, hop_features: int = 0, path_features: int = 0):
        super().__init__(in_channels, edge_channels, 1, hidden_channels=hidden_channels, num_layers=num_layers,
                         heads=heads, projector_hidden=projector_hidden, dropout=dropout, edge_hidden=edge_hidden,
                         hop_features=hop_features, path_features=path_features)
        if path_features:
            self.projector[0] = nn.Linear(hidden_channels + path_features, projector_hidden)

    def forward(self, x: Tensor, edge_index: Tensor, edge_type: Tensor, relation_emb: Tensor, question: Tensor,
                topic_mask: Tensor, node_hop: Tensor | None = None, node_path: Tensor | None = None) -> Tensor:
        """One logit per node, shape (N,)."""
        h = self.node_states(x, edge_index, edge_type, relation_emb, question, topic_mask, node_hop, node_path)
        if self.path_features:
            h = torch.cat([h, self._path(x, node_path)], dim=-1)
        return self.projector(h).reshape(-1)


class TextSoftPromptEncoder(nn.Module):
    r"""Ablation "text-based soft prompt" (Section 5.4): every triple's sentence embedding,
    projected by the same Linear–Tanh–Linear FFN, is one soft token; no graph structure.

    *interpretation*: the paper encodes the triples "using BERT"; we use the project's
    sentence encoder (all-MiniLM-L6-v2, a BERT model) on "head relation tail".

    Shapes: triples (T, F) -> soft prompt (T, D).
    """

    def __init__(self, in_channels: int = 384, llm_hidden: int = 576, *, projector_hidden: int = 256):
        super().__init__()
        self.in_channels = in_channels
        self.llm_hidden = llm_hidden
        self.projector_hidden = projector_hidden
        self.projector = nn.Sequential(nn.Linear(in_channels, projector_hidden), nn.Tanh(),
                                       nn.Linear(projector_hidden, llm_hidden))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for m in self.projector:
            if isinstance(m, nn.Linear):
                m.reset_parameters()

    def config(self) -> dict:
        return {"in_channels": self.in_channels, "llm_hidden": self.llm_hidden,
                "projector_hidden": self.projector_hidden}

    def forward(self, triples: Tensor) -> Tensor:
        return self.projector(triples)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, llm_hidden={self.llm_hidden})"


__all__ = ["GraphSoftPromptEncoder", "GraphNodeScorer", "TextSoftPromptEncoder"]
