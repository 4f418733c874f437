"""The faults a new user hit (issue 12), each pinned by a test: no services needed.

1 question length · 2 over-long labels/ids · 3 malformed NEO4J_URI · 4 echoed values capped ·
5 empty input · 6 abstention · 7 quiet driver retries · 8 paths leaving the input folder,
checkpoints removed on completion.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest
from PIL import Image

from kgqa.core.errors import GraphUnavailable, InvalidInput, cap, cap_repr
from tests.conftest import assert_one_line_error, run_kgqa
from tests.fakes.loader import SAMPLE, RecordingGraph

NO_NEO4J = {"NEO4J_URI": "bolt://127.0.0.1:9", "KGQA_NEO4J_TIMEOUT_S": "2"}


def _load(graph, path, **opts):
    from kgqa.loaders.wikidata5m.load import load_wikidata5m
    from kgqa.loaders.wikidata5m.options import LoadOptions

    return load_wikidata5m(graph, path, options=LoadOptions(embeddings=False, **opts))


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


# ------------------------------------------------------------------ 1. question length
def test_a_100kb_question_is_one_line_exit_2_before_anything_connects():
    from kgqa.core.method import MAX_QUESTION_CHARS, check_question

    assert check_question("  Where was Elon Musk born?  ") == "Where was Elon Musk born?"
    with pytest.raises(InvalidInput, match=r"question is 100,000 characters, over the 2,000-character limit"):
        check_question("x" * 100_000)
    check_question("x" * MAX_QUESTION_CHARS)  # the limit itself is allowed
    # the CLI refuses it before connecting (Neo4j is not even reachable here: exit 2, not 3)
    p = run_kgqa("ask", "why " * 25_000, env=NO_NEO4J, timeout=60)
    assert_one_line_error(p, "over the 2,000-character limit", code=2)


def test_eval_file_with_an_over_long_question_names_its_line(tmp_path):
    from kgqa.app.eval.questions import load_questions

    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "Q?", "answer": "A"}) + "\n"
                 + json.dumps({"id": "b", "question": "y" * 5000, "answer": "A"}) + "\n")
    with pytest.raises(InvalidInput, match=rf"{re.escape(str(f))}:2: question: 5,000 characters"):
        load_questions(f)
    qs, skipped = load_questions(f, lenient=True)
    assert [q.id for q in qs] == ["a"] and skipped[0].line == 2


# ------------------------------------------------------------------ 2. labels and ids too long to index
def test_a_label_over_the_index_limit_stops_a_strict_load_before_any_write(sample, tmp_path):
    _append(sample / "wikidata5m_entity.txt", b"Q999\t" + b"L" * 9000 + b"\n")
    g = RecordingGraph(tmp_path)
    with pytest.raises(InvalidInput) as e:
        _load(g, sample)
    assert re.fullmatch(rf"{re.escape(str(sample / 'wikidata5m_entity.txt'))}:\d+: label too long: 9,000 bytes "
                        r"for Q999 \(limit 4,096, Neo4j indexes labels\)", str(e.value)), str(e.value)
    assert g.writes == []  # validate, then write: nothing half-written (the relations neither)


def test_a_label_over_the_index_limit_is_a_counted_skip_when_lenient(sample, tmp_path):
    _append(sample / "wikidata5m_entity.txt", b"Q999\t" + "é".encode() * 3000 + b"\n")  # 6,000 bytes
    g = RecordingGraph(tmp_path)
    report = _load(g, sample, strict=False)
    assert report.rejects_by_reason == {"label too long": 1}
    assert "Q999" not in {r["id"] for r in g.rows("load_entities")}
    assert len(g.rows("load_entities")) > 0


def test_an_id_of_megabytes_is_rejected_with_a_short_message(sample, tmp_path):
    from kgqa.loaders.wikidata5m.files import parse_catalogue_line, parse_triple_line

    huge = "Q" + "1" * 10_000_000  # passes the id pattern, would pass to Neo4j's constraint index
    row, why = parse_catalogue_line(huge + "\tname", re.compile(r"^Q[1-9][0-9]*$"), "entity id")
    assert row is None and why.startswith("id syntax:") and "longer than 32 characters" in why and len(why) < 200
    triple, why = parse_triple_line(f"{huge}\tP31\tQ5", {"P31"}, {"Q5"})
    assert triple is None and len(why) < 200


# ------------------------------------------------------------------ 3. NEO4J_URI
@pytest.mark.parametrize("uri,fragment", [
    ("garbage", "scheme (none)"),
    ("bolt://127.0.0.1:notaport", "the port is not a number"),
    ("bolt://", "no host"),
    ("http://127.0.0.1:7474", "scheme 'http'"),
    ("bolt://127.0.0.1:7687/db", "unexpected path"),
])
def test_malformed_neo4j_uri_is_one_line_naming_it(uri, fragment):
    from kgqa.core.config import check_neo4j_uri

    with pytest.raises(GraphUnavailable) as e:
        check_neo4j_uri(uri)
    assert str(e.value).startswith(f"NEO4J_URI {uri!r} is not a Neo4j URI: ") and fragment in str(e.value)


@pytest.mark.parametrize("uri", ["bolt://127.0.0.1:7687", "neo4j+s://x.databases.neo4j.io",
                                 "neo4j://a:7687?policy=eu", "bolt+ssc://[::1]:7687"])
def test_good_neo4j_uris_pass(uri):
    from kgqa.core.config import check_neo4j_uri

    assert check_neo4j_uri(uri) == uri


@pytest.mark.parametrize("args", [("ask", "Where was Elon Musk born?"), ("trace", "show"),
                                  ("load", "wikidata5m", "--path", str(SAMPLE), "--no-embeddings")])
@pytest.mark.parametrize("uri", ["garbage", "bolt://127.0.0.1:notaport"])
def test_cli_with_malformed_neo4j_uri_exits_3_with_one_line(args, uri):
    p = run_kgqa(*args, env={"NEO4J_URI": uri}, timeout=120)
    assert_one_line_error(p, f"NEO4J_URI {uri!r} is not a Neo4j URI", code=3)


# ------------------------------------------------------------------ 4. what is echoed is capped
def test_cap_keeps_short_values_and_says_the_size_of_long_ones():
    assert cap("Q42") == "Q42" and cap_repr("Q42") == "'Q42'"
    c = cap("x" * 10_000_000)
    assert len(c) < 250 and c.endswith("… (10,000,000 chars)")
    assert cap_repr("y" * 1000, 10) == "'yyyyyyyyyy'… (1,000 chars)"


def test_a_10mb_bad_line_is_not_echoed_whole_into_the_error_or_the_rejects_file(sample, tmp_path):
    _append(sample / "wikidata5m_entity.txt", b"X" + b"9" * 10_000_000 + b"\tname\n")
    with pytest.raises(InvalidInput) as e:
        _load(RecordingGraph(tmp_path), sample)
    assert len(str(e.value)) < 1000 and "10,000,001 chars" in str(e.value)
    report = _load(RecordingGraph(tmp_path), sample, strict=False)
    assert report.rejects == 1
    assert Path(report.rejects_path).stat().st_size < 5000


def test_the_cli_caps_any_error_line():
    p = run_kgqa("trace", "rm", "f" * 100_000, env=NO_NEO4J, timeout=60)  # the id is echoed in the message
    assert_one_line_error(p, "kgqa: error: trace id 'fff", "(100,050 chars)", code=2)
    assert len(p.stderr) < 2100


# ------------------------------------------------------------------ 5. empty input
def test_an_empty_entity_file_is_one_line_and_nothing_written(sample, tmp_path):
    for name in ("wikidata5m_entity.txt", "wikidata5m_transductive_train.txt", "wikidata5m_transductive_valid.txt",
                 "wikidata5m_transductive_test.txt", "wikidata5m_text.txt", "entity_images.tsv"):
        (sample / name).write_text("")
    g = RecordingGraph(tmp_path)
    with pytest.raises(InvalidInput, match=r"wikidata5m_entity.txt: is empty: no entities to load \(nothing written\)"):
        _load(g, sample)
    assert g.writes == []


def test_a_folder_of_empty_files_fails_instead_of_succeeding_silently(tmp_path):
    for name in ("wikidata5m_entity.txt", "wikidata5m_relation.txt", "wikidata5m_transductive_train.txt",
                 "wikidata5m_transductive_valid.txt", "wikidata5m_transductive_test.txt"):
        (tmp_path / name).write_text("")
    p = run_kgqa("load", "wikidata5m", "--path", str(tmp_path), "--no-embeddings", env=NO_NEO4J, timeout=60)
    # Neo4j is not reachable here: the input is checked first only in the library; the CLI connects
    # first (exit 3) — so test the library's verdict directly as well
    assert p.returncode != 0
    with pytest.raises(InvalidInput, match="is empty: no entities to load"):
        _load(RecordingGraph(tmp_path / "data"), tmp_path)


def test_an_empty_split_is_loaded_with_a_warning(sample, tmp_path):
    (sample / "wikidata5m_transductive_valid.txt").write_text("")
    report = _load(RecordingGraph(tmp_path), sample)
    assert report.warnings == [f"{sample / 'wikidata5m_transductive_valid.txt'}: is empty: no facts loaded from it"]
    assert report.as_dict()["warnings"] == report.warnings


# ------------------------------------------------------------------ 6. abstention (VisPath option)
def _vispath(recognized, scores=None, **opts):
    from tests.fakes.vispath import ScriptedModel, base_scripts, make

    vp, g, m = make(**opts)
    m.recognized = recognized
    if scores is not None:
        m.rank = lambda image, k=1: scores[:k]
    return vp, m


def test_no_abstention_answers_however_weak_the_grounding():
    from tests.fakes.vispath import IMAGE, Q2HOP

    # a recognition score of 0.05 abstains as soon as abstain_below is above it (the default is; next test) ...
    vp, _ = _vispath("Government Museum, Chandigarh", scores=[("Q1", 0.05)], abstain_below=0.0)
    run = vp.run(Q2HOP, IMAGE)
    # ... with abstain_below=0 (--no-abstain) the method reasons on from the recognised start to the fixture
    # KG's answer
    assert not run.stop_reason.startswith("abstained"), run.stop_reason
    assert run.start.id == "Q1" and len(run.hops) == 2
    assert (run.answer, run.answer_id) == ("La Chaux-de-Fonds", "Q5")
    assert run.stop_reason.startswith("stop rule at hop 2")


def test_low_recognition_score_abstains_before_any_reasoning():
    from tests.fakes.vispath import IMAGE, Q2HOP

    vp, m = _vispath("Government Museum, Chandigarh", scores=[("Q1", 0.14)], abstain_below=0.3)
    run = vp.run(Q2HOP, IMAGE)
    assert run.answer is None and run.hops == []
    assert run.stop_reason == ("abstained: image recognised as 'Government Museum, Chandigarh' "
                               "with score 0.14 < 0.3")
    assert not any(k == "HopIntent" for k, _ in m.prompts)  # no LLM call after the decision


def test_weak_entity_link_abstains_and_a_strong_one_answers():
    from tests.fakes.vispath import IMAGE, Q2HOP

    vp, _ = _vispath("HACKED", abstain_below=0.5)  # the injected word links to nothing well
    run = vp.run(Q2HOP, IMAGE)
    assert run.answer is None and run.stop_reason.startswith("abstained: start entity ")
    assert "matches 'HACKED' with cosine" in run.stop_reason
    vp, _ = _vispath("Government Museum, Chandigarh", abstain_below=0.5)
    assert vp.run(Q2HOP, IMAGE).answer is not None


def test_given_entity_never_abstains():
    from tests.fakes.vispath import Q2HOP

    vp, _ = _vispath("HACKED", abstain_below=0.99)
    assert vp.run(Q2HOP, None, entity_id="Q1").answer is not None


# ------------------------------------------------------------------ 7. quiet driver retries
def test_driver_gives_up_retrying_after_the_timeout_and_its_warnings_are_quiet(monkeypatch):
    import neo4j

    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    seen = {}

    class FakeDriver:
        def verify_connectivity(self):
            pass

        def close(self):
            pass

    def fake_driver(uri, **kw):
        seen.update(kw, uri=uri)
        return FakeDriver()

    monkeypatch.setattr(neo4j.GraphDatabase, "driver", fake_driver)
    log = logging.getLogger("neo4j")
    monkeypatch.setattr(log, "level", logging.NOTSET)
    Graph(Settings(neo4j_uri="bolt://127.0.0.1:7687", neo4j_timeout_s=4.0)).verify()
    assert seen["max_transaction_retry_time"] == 4.0
    assert log.level == logging.CRITICAL  # retries are WARNINGs, a defunct connection an ERROR


def test_an_index_refusal_from_neo4j_is_one_line_not_a_traceback():
    from neo4j.exceptions import DatabaseError

    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    g = Graph(Settings(neo4j_uri="bolt://127.0.0.1:7687"))
    err = DatabaseError._hydrate_neo4j(code="Neo.DatabaseError.General.UnknownError",
                                       message="Property value is too large to index " + "x" * 10_000)

    def boom():
        raise err

    with pytest.raises(GraphUnavailable, match="failed the query: Property value is too large to index") as e:
        g._guard(boom)
    assert len(str(e.value)) < 500


def test_a_transaction_log_neo4j_cannot_append_to_is_a_full_store_exit_5_naming_it(tmp_path):
    """Neo4j's store on a full disk (tests/faults/test_disk_full_store.py runs it for real)."""
    from neo4j.exceptions import DatabaseError

    from kgqa.core.config import Settings
    from kgqa.core.errors import NoSpace
    from kgqa.core.graph import Graph

    err = DatabaseError._hydrate_neo4j(code="Neo.DatabaseError.Transaction.TransactionCommitFailed",
                                       message="Could not append transaction: Transaction #70 {...} to log.")

    def boom():
        raise err

    local = Graph(Settings(neo4j_uri="bolt://127.0.0.1:7687", neo4j_bolt_port=7687, data_dir=tmp_path))
    with pytest.raises(NoSpace, match=r"no space left under its store .*neo4j/data \([\d.,]+ MB free there, "
                                      r"the space needed unknown\)") as e:
        local._guard(boom)
    assert e.value.exit_code == 5 and str(tmp_path) in str(e.value) and "run the same command again" in str(e.value)
    local.store_need = (12_345_678, "1.0 MB of input at what a measured load took")     # a loader's estimate
    with pytest.raises(NoSpace, match=r"MB free there, about 12.3 MB needed \(1.0 MB of input at what a measured"):
        local._guard(boom)
    remote = Graph(Settings(neo4j_uri="bolt://db.example:7687", neo4j_bolt_port=7687, data_dir=tmp_path))
    with pytest.raises(NoSpace, match=r"db.example:7687 could not write its transaction log \(is the disk under its "
                                      r"store full\? the space needed unknown\)"):
        remote._guard(boom)


def test_a_full_disk_under_the_rejects_file_says_about_how_much_it_needs(tmp_path, monkeypatch):
    """The rejects file's line: its bytes so far, at that rate over the rest of the input; unknown without it."""
    import errno

    from kgqa.core.errors import NoSpace
    from kgqa.loaders.rejects import Rejects

    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text("".join(f"Q{i}\tok\n" for i in range(1000)))
    bad.write_text("".join(f"Q{i}\tbad line {i}\n" for i in range(1000)))

    class Disk:                         # a file that takes ``room`` bytes, then ENOSPC
        def __init__(self, room):
            self.room = room

        def write(self, text):
            self.room -= len(text)
            if self.room < 0:
                raise OSError(errno.ENOSPC, "No space left on device")
            return len(text)

        def close(self):
            pass

    def fill(inputs, room):
        r = Rejects(False, tmp_path / "rejects.tsv", inputs=inputs)
        r._fh = Disk(room)              # opened: the header is not counted here
        with pytest.raises(NoSpace) as e:
            for n in range(1, 1001):
                r.line(bad, n, "id: not a Q-id", f"Q{n - 1}\tbad line {n - 1}")
        return str(e.value)

    whole = len("".join(f"{bad}:{n}\tid: not a Q-id\tQ{n - 1}\\tbad line {n - 1}\n" for n in range(1, 1001)))
    line = fill([good, bad], whole // 4)          # a quarter of the rejects fit
    need = float(line.split("about ", 1)[1].split(" MB needed", 1)[0])
    assert abs(need * 1e6 - whole) < 0.1 * whole, (need, whole, line)
    assert "no space left writing" in line and "(the rejects file)" in line and "at that rate over the rest" in line
    assert "the space needed unknown" in fill([], whole // 4)            # no input list: no estimate


# ------------------------------------------------------------------ 8. paths leaving the input folder
def test_entity_images_tsv_may_not_point_outside_its_folder(sample, tmp_path):
    outside = tmp_path / "outside.png"
    Image.new("RGB", (32, 32), (200, 10, 10)).save(outside)  # a real image: refused for where it is
    (sample / "entity_images.tsv").write_text("Q90\t../outside.png\n")
    g = RecordingGraph(tmp_path)
    with pytest.raises(InvalidInput, match=r"entity_images.tsv:1: image path '../outside.png' leaves the folder"):
        _load(g, sample)
    assert g.writes == []
    (sample / "entity_images.tsv").write_text(f"Q90\t{outside}\n")  # absolute, elsewhere: the same
    with pytest.raises(InvalidInput, match="leaves the folder"):
        _load(RecordingGraph(tmp_path), sample)


def test_eval_image_paths_may_not_leave_the_question_files_folder(tmp_path):
    from kgqa.app.eval.questions import load_questions

    (tmp_path / "sub").mkdir()
    Image.new("RGB", (32, 32)).save(tmp_path / "secret.png")
    f = tmp_path / "sub" / "q.jsonl"
    f.write_text(json.dumps({"id": "a", "question": "Q?", "answer": "A", "image": "../secret.png"}) + "\n")
    with pytest.raises(InvalidInput, match=r"q.jsonl:1: image: ../secret.png leaves the question file's folder"):
        load_questions(f)


def test_a_completed_load_removes_its_checkpoints(sample, tmp_path):
    g = RecordingGraph(tmp_path)
    _load(g, sample)
    written = {p["key"] for n, _, p in g.writes if p.get("key") and n != "load_checkpoint_delete"}
    deleted = {p["key"] for n, _, p in g.writes if n == "load_checkpoint_delete"}
    assert written and written <= deleted


# ------------------------------------------------------------------ 1b. Ctrl-C says so
def test_ctrl_c_prints_interrupted_and_exits_130(tmp_path):
    import os
    import signal
    import socket
    import subprocess
    import time

    from tests.conftest import KGQA

    with socket.socket() as silent:  # accepts the Bolt connection and never answers: `ask` waits
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        env = {**os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{silent.getsockname()[1]}", "KGQA_NEO4J_TIMEOUT_S": "60"}
        env.pop("KGQA_DEBUG", None)
        # SIGINT handled as by a terminal's foreground process (a background job would ignore it)
        p = subprocess.Popen([KGQA, "ask", "Where was Elon Musk born?"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        time.sleep(4)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and err.strip().splitlines()[-1] == "kgqa: interrupted", (p.returncode, err)


def test_apply_schema_drops_a_constraints_index_left_without_its_constraint_first(tmp_path):
    """Neo4j killed between a uniqueness constraint's index and the constraint leaves the index alone; CREATE
    CONSTRAINT … IF NOT EXISTS then fails ("There already exists an index called 'entity_id'"), found by a
    --bulk kill point (tests/faults/test_kill_neo4j_bulk.py): apply_schema drops such an orphan first."""
    from kgqa.core.config import Settings
    from kgqa.core.graph import Graph

    g = Graph(Settings(data_dir=tmp_path))
    calls = []
    g.read = lambda name, **p: calls.append(("read", name, p)) or [{"name": "entity_id"}]
    g.write = lambda name, params=None, **p: calls.append(("write", name, params or p))
    g._run = lambda q, p, write: calls.append(("run", q.split(" IF ")[0], None))
    g.apply_schema()
    assert calls[0][:2] == ("read", "schema_orphan_indexes") and "entity_id" in calls[0][2]["names"]
    assert calls[1] == ("write", "schema_drop_index", {"name": "entity_id"})
    assert calls[2] == ("run", "CREATE CONSTRAINT entity_id", None)       # then the schema, constraint first
