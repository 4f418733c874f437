"""``kgqa train paths``' check on the bundled demo KG, the real Neo4j and the real all-MiniLM-L6-v2: a deliberately
bad training run (from the untrained model, a few questions, one epoch, a learning rate far too high for them) is
measured on the KG's held-out-template questions beside the reader it would replace (a copy of the shipped one,
with its terminal weights) and set aside: the installed files stay byte for byte; ``--keep-new`` installs it."""

from __future__ import annotations

import json
import shutil

from tests.conftest import REPO, run_kgqa

SHIPPED = REPO / "data" / "demo" / "paths"
BAD = ("train", "paths", "--examples", "30", "--epochs", "1", "--lr", "3e-3", "--init", "base")   # --check 36
ENV = {"KGQA_CHAT_BACKEND": "none", "KGQA_TORCH_THREADS": "1", "OMP_NUM_THREADS": "1"}


def test_a_worse_reader_is_kept_out_and_keep_new_installs_it(demo_kg, tmp_path):
    ck, tw = tmp_path / "chain-reader.safetensors", tmp_path / "chain-reader.terminal.json"
    shutil.copy(SHIPPED / "chain-reader.safetensors", ck)
    shutil.copy(SHIPPED / "chain-reader.terminal.json", tw)
    before, weights = ck.read_bytes(), tw.read_bytes()

    p = run_kgqa(*BAD, "--checkpoint", str(ck), env=ENV)
    assert p.returncode == 0, p.stderr
    rejected = tmp_path / "chain-reader.rejected.safetensors"
    assert ck.read_bytes() == before and tw.read_bytes() == weights       # the old reader, untouched
    assert rejected.is_file() and not (tmp_path / "chain-reader.candidate.safetensors").exists()
    out = p.stdout
    assert "check: 36 held-out-template questions" in out and "2-hop" in out and "4-hop" in out
    rows = [ln.split() for ln in out.splitlines() if ln.strip().startswith(("before ", "new "))]
    assert [r[0] for r in rows] == ["before", "new"] and float(rows[1][1]) < float(rows[0][1]), out
    kept = [ln for ln in out.splitlines() if ln.startswith("kept the previous reader")]
    assert len(kept) == 1 and str(rejected) in kept[0] and "--keep-new" in kept[0]
    assert "next: kgqa train terminal" not in out

    p = run_kgqa(*BAD, "--checkpoint", str(ck), "--keep-new", "--json", env=ENV)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["kept_new"] and rep["checkpoint"] == str(ck) and rep["check"]["new"]["em"] < rep["check"]["old"]["em"]
    assert ck.read_bytes() != before and not tw.exists()       # installed; the old reader's weights removed
    assert rep["terminal_weights_removed"] == str(tw)
