"""kgqa.loaders"""
