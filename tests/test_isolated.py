"""A file's time and memory budget: PDF, Office and HTML files are read in a child process, and
a file that takes too long, needs too much memory, or crashes its parser, fails alone while the
sync goes on."""

from __future__ import annotations

import os
import time

import pytest
from docfiles import make_pdf

from ragteam.documents import CONVERTERS, ConversionFailed, Converted, ConvertSettings, Unit
from ragteam.documents.isolated import Isolated, OutOfMemory, TimedOut
from ragteam.retrieval import sync_folder
from ragteam.retrieval.index import IndexSettings

BM25 = IndexSettings(retriever="bm25")


class Slow:
    """Reads a `.slow` file's text after sleeping the seconds its first line names."""

    name, version, suffixes = "slow", "1", (".slow",)

    def convert(self, path, settings):
        first, _, rest = path.read_text().partition("\n")
        time.sleep(float(first))
        return Converted("", [Unit(rest)])


class Hungry:
    """Holds as many MB as a `.hungry` file's first line names, then reads its text."""

    name, version, suffixes = "hungry", "1", (".hungry",)

    def convert(self, path, settings):
        first, _, rest = path.read_text().partition("\n")
        held = bytearray(int(first) * 2**20)  # really allocated: RLIMIT_AS applies
        held[-1] = 1
        return Converted("", [Unit(rest)])


class Crashing:
    name, version, suffixes = "crashing", "1", (".crash",)
    isolated = True

    def convert(self, path, settings):
        with open(str(path) + ".tries", "a") as tries:  # beside it: how often it was read
            tries.write("x")
        os._exit(7)  # a parser dying in C code takes its process with it


class Raising:
    name, version, suffixes = "raising", "1", (".raise",)

    def convert(self, path, settings):
        raise KeyError("no trailer")


def test_a_slow_file_is_stopped_at_its_budget_and_the_next_file_reads(tmp_path):
    slow, quick = tmp_path / "a.slow", tmp_path / "b.slow"
    slow.write_text("60\nnever read")
    quick.write_text("0\nThe keeper's log")
    with Isolated(seconds=2) as isolated:
        began = time.monotonic()
        with pytest.raises(TimedOut, match="took more than 2 s to read"):
            isolated.convert(Slow(), slow, ConvertSettings())
        assert time.monotonic() - began < 15  # stopped, not waited out
        assert isolated.convert(Slow(), quick, ConvertSettings()).units[0].text == (
            "The keeper's log"
        )


def test_a_file_past_its_memory_budget_fails_alone_and_the_next_file_reads(tmp_path):
    hungry, modest = tmp_path / "a.hungry", tmp_path / "b.hungry"
    hungry.write_text("3000\nnever read")
    modest.write_text("50\nThe keeper's log")
    with Isolated(seconds=60, memory_mb=1024) as isolated:
        with pytest.raises(OutOfMemory, match="needed more than 1024 MB of memory"):
            isolated.convert(Hungry(), hungry, ConvertSettings())
        assert isolated.convert(Hungry(), modest, ConvertSettings()).units[0].text == (
            "The keeper's log"
        )
    with Isolated(seconds=60, memory_mb=4096) as roomy:  # the same file under a larger budget
        assert roomy.convert(Hungry(), hungry, ConvertSettings()).units[0].text == "never read"


def test_a_sync_tries_a_file_that_ran_out_of_memory_again_only_with_more(tmp_path):
    from ragteam.retrieval.sync import SyncSettings

    CONVERTERS.register("hungry", f"{__name__}:Hungry")
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "big.hungry").write_text("1500\nThe big file's text")
        (docs / "notes.txt").write_text("The lighthouse keeper is Ada Brenn.")
        tight = SyncSettings(file_memory_mb=1024)
        first = sync_folder(docs, tmp_path / "ix", sync=tight, index=BM25)
        status = {s.path: (s.status, s.reason) for s in first.files}
        assert status["notes.txt"][0] == "read"
        assert status["big.hungry"][0] == "failed" and "1024 MB" in status["big.hungry"][1]
        again = sync_folder(docs, tmp_path / "ix", sync=tight, index=BM25)
        assert {s.path: s.status for s in again.files}["big.hungry"] == "failed"
        assert again.converted == 0  # the same budget: not read again
        roomy = SyncSettings(file_memory_mb=4096)
        done = sync_folder(docs, tmp_path / "ix", sync=roomy, index=BM25)
        assert {s.path: s.status for s in done.files}["big.hungry"] == "read"
    finally:
        CONVERTERS.unregister("hungry")


def test_a_file_that_crashed_its_converter_is_read_again_only_under_larger_budgets(tmp_path):
    """N-M1: a conversion that died at the memory limit was retried at full cost every sync."""
    from ragteam.retrieval.sync import SyncSettings

    CONVERTERS.register("crash", f"{__name__}:Crashing")
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "notes.txt").write_text("The ferry leaves at nine.")
        (docs / "x.crash").write_text("anything")
        tries = tmp_path / "docs" / "x.crash.tries"
        tight = SyncSettings(file_memory_mb=1024)
        for _ in range(2):
            first = sync_folder(docs, tmp_path / "ix", sync=tight, index=BM25)
            failed = {s.path: s.reason for s in first.files if s.status == "failed"}
            assert "crashed on it" in failed["x.crash"]
        assert tries.read_text() == "x"  # read once, not again under the same budgets
        sync_folder(docs, tmp_path / "ix", sync=SyncSettings(file_memory_mb=2048), index=BM25)
        assert tries.read_text() == "xx"  # more memory: tried again
    finally:
        CONVERTERS.unregister("crash")


def test_a_crashing_or_raising_converter_is_the_files_failure(tmp_path):
    crash, bad, fine = tmp_path / "x.crash", tmp_path / "y.raise", tmp_path / "z.slow"
    for f in (crash, bad):
        f.write_text("anything")
    fine.write_text("0\nstill here")
    with Isolated(seconds=30) as isolated:
        with pytest.raises(ConversionFailed, match="crashed on it .exit code 7"):
            isolated.convert(Crashing(), crash, ConvertSettings())
        with pytest.raises(ConversionFailed, match="failed: KeyError: 'no trailer'"):
            isolated.convert(Raising(), bad, ConvertSettings())
        assert isolated.convert(Slow(), fine, ConvertSettings()).units[0].text == "still here"


def test_a_real_pdf_reads_the_same_in_the_child(tmp_path):
    from ragteam.documents.pdf import PdfConverter

    pdf = make_pdf(tmp_path / "report.pdf")
    here = PdfConverter().convert(pdf, ConvertSettings())
    with Isolated() as isolated:
        assert isolated.convert(PdfConverter(), pdf, ConvertSettings()) == here


def test_a_sync_goes_on_past_a_slow_file_and_tries_it_again_only_with_more_time(tmp_path):
    CONVERTERS.register("slow", f"{__name__}:Slow")
    try:
        docs = tmp_path / "docs"
        docs.mkdir()
        (docs / "stuck.slow").write_text("3\nThe stuck file's text")
        (docs / "notes.txt").write_text("The lighthouse keeper is Ada Brenn.")
        from ragteam.retrieval.sync import SyncSettings

        tight = SyncSettings(file_seconds=1)
        first = sync_folder(docs, tmp_path / "ix", sync=tight, index=BM25)
        status = {s.path: (s.status, s.reason) for s in first.files}
        assert status["notes.txt"][0] == "read"
        assert status["stuck.slow"][0] == "failed" and "more than 1 s" in status["stuck.slow"][1]
        began = time.monotonic()
        again = sync_folder(docs, tmp_path / "ix", sync=tight, index=BM25)
        assert time.monotonic() - began < 2.5  # the same budget: not tried (and waited) again
        assert {s.path: s.status for s in again.files}["stuck.slow"] == "failed"
        roomy = sync_folder(docs, tmp_path / "ix", sync=SyncSettings(file_seconds=30), index=BM25)
        assert {s.path: s.status for s in roomy.files}["stuck.slow"] == "read"
    finally:
        CONVERTERS.unregister("slow")


def test_a_script_without_a_main_guard_syncs_once(tmp_path):
    """The child is a fresh interpreter, not multiprocessing's spawn (which runs the parent's
    main script again): a user's plain script that syncs a folder of PDFs syncs it once."""
    import subprocess
    import sys

    docs = tmp_path / "docs"
    docs.mkdir()
    make_pdf(docs / "report.pdf")
    script = tmp_path / "plain.py"
    script.write_text(
        "from ragteam.retrieval import sync_folder\n"
        "from ragteam.retrieval.index import IndexSettings\n"
        f"r = sync_folder({str(docs)!r}, {str(tmp_path / 'ix')!r}, "
        "index=IndexSettings(retriever='bm25'))\n"
        "print('SYNCED', [(s.path, s.status, s.reason) for s in r.files])\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("SYNCED") == 1
    assert "('report.pdf', 'read', '')" in done.stdout


def test_what_a_converter_prints_does_not_break_the_channel(tmp_path):
    noisy = tmp_path / "n.slow"
    noisy.write_text("0\nquiet text")
    with Isolated(seconds=30) as isolated:
        assert isolated.convert(Printing(), noisy, ConvertSettings()).units[0].text == "fine"


class Printing:
    name, version, suffixes = "printing", "1", (".slow",)

    def convert(self, path, settings):
        print("a stray line on stdout")
        return Converted("", [Unit("fine")])


def test_markdown_rst_and_text_are_read_under_the_file_budgets(tmp_path):
    """N-H3's rest: text formats ran in the server's process, outside --file-seconds: markdown-it
    takes about 6 s over 512 KB of '['. Now a slow one fails at its budget like a PDF, and the
    small files beside it still read."""
    from ragteam.retrieval.sync import SyncSettings

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "brackets.md").write_text("[" * 1_000_000)
    (docs / "notes.md").write_text("# Notes\n\nThe lighthouse keeper is Ada Brenn.")
    (docs / "plain.rst").write_text("Title\n=====\n\nThe ferry leaves at noon.")
    (docs / "plain.txt").write_text("The bell rings twice.")
    began = time.monotonic()
    report = sync_folder(docs, tmp_path / "ix", sync=SyncSettings(file_seconds=1), index=BM25)
    status = {s.path: (s.status, s.reason) for s in report.files}
    assert status["brackets.md"][0] == "failed" and "more than 1 s" in status["brackets.md"][1]
    assert {status[name][0] for name in ("notes.md", "plain.rst", "plain.txt")} == {"read"}
    assert time.monotonic() - began < 8  # stopped at its second, not read for ten
