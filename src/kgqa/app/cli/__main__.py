"""``python -m kgqa.app.cli``: the ``kgqa`` command."""

from kgqa.app.cli import main

main()
