"""kgqa: multimodal knowledge-graph question answering over Neo4j."""

__version__ = "0.1.0"
