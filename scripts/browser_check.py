"""Look at a kgqa trace the way a user does: its Neo4j Browser link, in a real headless Chromium.

    python scripts/browser_check.py --trace 0123456789abcdef --out trace.png
    python scripts/browser_check.py --url "http://127.0.0.1:7474/browser/?dbms=…&cmd=edit&arg=…" --out trace.png
    python scripts/browser_check.py --ask "Who manufactures the Falcon 9 rocket?" --entity Q219913 --out trace.png

With ``--ask`` it first runs ``kgqa ask`` and takes the link it printed (its ``browser:`` line); with
``--trace`` the link ``kgqa trace open ID`` prints. It opens that link, checks that Browser's connect
form came filled in (server and user from the link), gives the password (NEO4J_PASSWORD), connects,
runs what the link put in the editor, waits for the result frame's graph, saves a screenshot and
prints JSON: the query that ran, the node labels in the result overview and their counts, the node and
relationship captions drawn on the canvas, and the (id, name) of the Relation nodes its Table view
lists. Exit 1 when the Question, Path and Entity nodes are not all on the canvas.

Needs Chromium (Debian: ``apt-get install chromium``; ``--chromium PATH`` or $KGQA_CHROMIUM
otherwise) and Playwright for Python (``pip install playwright``, the dev extra): Playwright drives
the system Chromium, it downloads no browser.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

KGQA = str(Path(sys.executable).with_name("kgqa"))


def find_chromium(given: str | None = None) -> str | None:
    for c in (given, os.environ.get("KGQA_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if c and (shutil.which(c) or Path(c).is_file()):
            return shutil.which(c) or c
    return None


def _kgqa(args: list[str], env: dict) -> list[str]:
    p = subprocess.run([KGQA, *args], capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"kgqa {args[0]} failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    return p.stdout.strip().splitlines()


def ask_url(question: str, image: str | None, entity: str | None, env: dict) -> tuple[str, str]:
    """Run ``kgqa ask``; (trace id, the Browser link it printed)."""
    lines = _kgqa(["ask"] + (["--entity", entity] if entity else []) + ([image] if image else []) + [question], env)
    trace = next(ln.removeprefix("trace: ") for ln in lines if ln.startswith("trace: "))
    return trace, next(ln.removeprefix("browser: ") for ln in lines if ln.startswith("browser: "))


def check(url: str, out: Path, *, password: str, chromium: str, timeout_s: float = 120) -> dict:
    """Open the Browser link, connect, run what it put in the editor, screenshot to ``out``; what the frame shows."""
    from playwright.sync_api import sync_playwright

    ms = int(timeout_s * 1000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url, timeout=ms)
            # the connect form, filled in from the link's dbms parameter: scheme, host:port, user
            page.wait_for_selector("[data-testid=boltaddress]", timeout=ms)
            form = {"address": page.input_value("[data-testid=boltaddress]"),
                    "user": page.input_value("[data-testid=username]")}
            if page.locator("[data-testid=bolt-scheme-select]").count():
                form["scheme"] = page.input_value("[data-testid=bolt-scheme-select]")
            page.fill("[data-testid=password]", password)
            page.click("[data-testid=connect]")
            page.wait_for_selector("[data-testid=frame] >> text=/You are connected as user/i", timeout=ms)
            frames_before = page.locator("[data-testid=frame]").count()
            # the editor (Monaco) holds the link's query: run it as it is
            editor = page.locator("[data-testid=activeEditor] .view-lines")
            editor.filter(has_text="MATCH").wait_for(timeout=ms)
            page.click("[data-testid=editor-Run]")
            page.wait_for_function(f"document.querySelectorAll('[data-testid=frame]').length > {frames_before}",
                                   timeout=ms)
            frame = page.locator("[data-testid=frame]").first  # the newest frame is on top
            frame.locator("[data-testid^=property-details-overview-node-label-]").first.wait_for(timeout=ms)
            page.wait_for_timeout(2500)  # let the force layout settle before the picture
            ran = frame.locator("[data-testid=frameCommand]").first.inner_text() \
                if frame.locator("[data-testid=frameCommand]").count() else None
            labels = {}
            for el in frame.locator("[data-testid^=property-details-overview-node-label-]").all():
                tid = el.get_attribute("data-testid").removeprefix("property-details-overview-node-label-")
                m = re.search(r"\((\d+)\)", el.inner_text())
                labels[tid] = int(m.group(1)) if m else None
            captions = [t.strip() for t in frame.locator("svg g.node text").all_text_contents() if t and t.strip()]
            rel_captions = [t.strip() for t in frame.locator("svg g.relationship text").all_text_contents()
                            if t and t.strip()]
            nodes = frame.locator("svg g.node").count()
            rels = frame.locator("svg g.relationship").count()
            errors = [e.strip() for e in frame.locator("[data-testid=cypherFrameErrorMessage]").all_inner_texts()]
            out.parent.mkdir(parents=True, exist_ok=True)
            frame.screenshot(path=str(out))
            # the Table view: the returned columns as JSON (the Relation nodes' ids and names among them)
            frame.locator("[data-testid=cypherFrameSidebarTable]").click()
            table = frame.locator("[data-testid=frameContents]").inner_text(timeout=ms)
        finally:
            browser.close()
    return {"connect_form": form, "query": " ".join((ran or "").split()) or None, "labels": labels,
            "nodes_on_canvas": nodes, "relationships_on_canvas": rels, "captions": captions,
            "relationship_captions": rel_captions, "errors": errors, "screenshot": str(out),
            "relations": relation_rows(table), "table": table}


def relation_rows(table: str) -> list[list[str]]:
    """[id, name] of each Relation node in the text of Browser's Table view (node JSON, one per cell)."""
    out = []
    for m in re.finditer(r'"labels": \[\s*"Relation"\s*\],\s*"properties": \{(.*?)\n\s*\},\s*"elementId"', table, re.S):
        rid, name = (re.search(rf'"{k}": "([^"]*)"', m.group(1)) for k in ("id", "name"))
        out.append([rid.group(1) if rid else None, name.group(1) if name else None])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", help="the Browser link `kgqa ask` / `kgqa trace open` printed")
    ap.add_argument("--trace", metavar="ID", help="take the link of `kgqa trace open ID`")
    ap.add_argument("--ask", metavar="QUESTION", help="run `kgqa ask` first and use its link")
    ap.add_argument("--image")
    ap.add_argument("--entity")
    ap.add_argument("--out", type=Path, default=Path("browser-trace.png"))
    ap.add_argument("--chromium")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()

    from kgqa.core.config import Settings

    chromium = find_chromium(a.chromium)
    if chromium is None:
        sys.exit("browser_check: no Chromium found (apt-get install chromium, or --chromium PATH)")
    if sum(bool(x) for x in (a.url, a.trace, a.ask)) != 1:
        sys.exit("browser_check: give one of --url LINK, --trace ID, --ask QUESTION")
    trace, url = a.trace, a.url
    if a.trace:
        url = _kgqa(["trace", "open", a.trace], dict(os.environ))[-1]
    if a.ask:
        trace, url = ask_url(a.ask, a.image, a.entity, dict(os.environ))
    res = check(url, a.out, password=Settings().neo4j_password, chromium=chromium, timeout_s=a.timeout)
    res["trace"] = trace
    print(json.dumps(res, indent=2, ensure_ascii=False))
    if not {"Question", "Path", "Entity"} <= set(res["labels"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
