"""kgqa.engine"""
