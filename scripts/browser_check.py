"""Look at a kgqa trace the way a user does: in Neo4j Browser, in a real headless Chromium.

    python scripts/browser_check.py --cypher "MATCH (q:Question {id: '…'}) …" --out trace.png
    python scripts/browser_check.py --ask "Who manufactures the Falcon 9 rocket?" --entity Q741925 --out trace.png

With ``--ask`` it first runs ``kgqa ask`` and takes the Cypher line it printed (its last line).
Then it opens http://127.0.0.1:$KGQA_NEO4J_HTTP_PORT/browser/, connects with the local credentials
(NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD), runs that line in the editor, waits for the result
frame's graph, saves a screenshot and prints JSON: the node labels in the result overview, their
counts and the node captions drawn on the canvas. Exit 1 when the Question, Path and Entity
nodes are not all on the canvas.

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


def ask_cypher(question: str, image: str | None, entity: str | None, env: dict) -> tuple[str, str]:
    """Run ``kgqa ask``; (trace id, the Browser Cypher line it printed)."""
    args = [KGQA, "ask"] + (["--entity", entity] if entity else []) + ([image] if image else []) + [question]
    p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"kgqa ask failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    lines = p.stdout.strip().splitlines()
    trace = next(ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("trace: "))
    return trace, lines[-1]


def check(cypher: str, out: Path, *, http_url: str, bolt_url: str, user: str, password: str,
          chromium: str, timeout_s: float = 120) -> dict:
    """Open Neo4j Browser, connect, run ``cypher``, screenshot to ``out``; what the result frame shows."""
    from playwright.sync_api import sync_playwright

    ms = int(timeout_s * 1000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{http_url}/browser/", timeout=ms)
            # the connect form: scheme selector + host:port, user, password
            page.wait_for_selector("[data-testid=boltaddress]", timeout=ms)
            scheme, _, hostport = bolt_url.partition("://")
            if page.locator("[data-testid=bolt-scheme-select]").count():
                page.select_option("[data-testid=bolt-scheme-select]", f"{scheme}://")
                page.fill("[data-testid=boltaddress]", hostport)
            else:
                page.fill("[data-testid=boltaddress]", bolt_url)
            page.fill("[data-testid=username]", user)
            page.fill("[data-testid=password]", password)
            page.click("[data-testid=connect]")
            page.wait_for_selector("[data-testid=frame] >> text=/You are connected as user/i", timeout=ms)
            frames_before = page.locator("[data-testid=frame]").count()
            # the editor (Monaco): one line, Enter runs it
            page.click("[data-testid=activeEditor]")
            page.keyboard.type(cypher)
            page.click("[data-testid=editor-Run]")
            page.wait_for_function(f"document.querySelectorAll('[data-testid=frame]').length > {frames_before}",
                                   timeout=ms)
            frame = page.locator("[data-testid=frame]").first  # the newest frame is on top
            frame.locator("[data-testid^=property-details-overview-node-label-]").first.wait_for(timeout=ms)
            page.wait_for_timeout(2500)  # let the force layout settle before the picture
            labels = {}
            for el in frame.locator("[data-testid^=property-details-overview-node-label-]").all():
                tid = el.get_attribute("data-testid").removeprefix("property-details-overview-node-label-")
                m = re.search(r"\((\d+)\)", el.inner_text())
                labels[tid] = int(m.group(1)) if m else None
            captions = [t.strip() for t in frame.locator("svg g.node text").all_text_contents() if t and t.strip()]
            nodes = frame.locator("svg g.node").count()
            rels = frame.locator("svg g.relationship").count()
            errors = [e.strip() for e in frame.locator("[data-testid=cypherFrameErrorMessage]").all_inner_texts()]
            out.parent.mkdir(parents=True, exist_ok=True)
            frame.screenshot(path=str(out))
        finally:
            browser.close()
    return {"labels": labels, "nodes_on_canvas": nodes, "relationships_on_canvas": rels,
            "captions": captions, "errors": errors, "screenshot": str(out)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cypher", help="the Browser line `kgqa ask` printed")
    ap.add_argument("--ask", metavar="QUESTION", help="run `kgqa ask` first and use its line")
    ap.add_argument("--image")
    ap.add_argument("--entity")
    ap.add_argument("--out", type=Path, default=Path("browser-trace.png"))
    ap.add_argument("--chromium")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()

    from kgqa.core.config import Settings

    s = Settings()
    chromium = find_chromium(a.chromium)
    if chromium is None:
        sys.exit("browser_check: no Chromium found (apt-get install chromium, or --chromium PATH)")
    if bool(a.cypher) == bool(a.ask):
        sys.exit("browser_check: give --cypher LINE or --ask QUESTION")
    trace = None
    cypher = a.cypher
    if a.ask:
        trace, cypher = ask_cypher(a.ask, a.image, a.entity, dict(os.environ))
    res = check(cypher, a.out, http_url=f"http://127.0.0.1:{s.neo4j_http_port}", bolt_url=s.neo4j_uri,
                user=s.neo4j_username, password=s.neo4j_password, chromium=chromium, timeout_s=a.timeout)
    res["trace"] = trace
    print(json.dumps(res, indent=2, ensure_ascii=False))
    if not {"Question", "Path", "Entity"} <= set(res["labels"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
