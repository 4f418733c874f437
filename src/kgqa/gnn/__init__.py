"""kgqa.gnn"""
