"""Peak memory and time of `ragteam index sync` on the hostile files of the 2026-11-26
reliability probe (issue 52), each in a folder of its own, each sync a separate process whose
peak RSS is read from the kernel (`wait4`).

    python bench/hostile_sync.py --work /tmp/hostile [--scale 1.0]

Cases (sizes at --scale 1): a one-page PDF whose content stream inflates to 400 MiB (H1); a
.docx whose body holds 10 MiB of short paragraphs (H2); a .pptx with one 200 MiB slide (H2); a
40 MB log without blank lines (H3); an 8 GiB sparse file named .txt (H4); and, for scale, a
20 MB text of ordinary paragraphs; and the 2026-11-28 re-probe's (issue 67): 40 MB of base64
with no whitespace (N-H1), 200 KB of RST `:a` (N-H3), an HTML page 2,000 levels deep (N-M3).
The goal (issue 52): peak under 1.5 GB, and under 5x the
largest file's converted text, time linear in the text."""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path


def pdf_bomb(path: Path, mib: float) -> None:
    unit = b"BT /F1 12 Tf 72 700 Td (Hello harbour) Tj ET\n"
    data = zlib.compress(unit * (int(mib * 2**20) // len(unit)), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(data) + data + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    pdf, offsets = bytearray(b"%PDF-1.4\n"), []
    for n, body in enumerate(objects, 1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(pdf)
    pdf += b"xref\n0 6\n0000000000 65535 f \n" + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    pdf += b"trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % xref
    path.write_bytes(bytes(pdf))


def big_docx(path: Path, mib: float) -> None:
    import docx

    buffer = io.BytesIO()
    docx.Document().save(buffer)
    source = zipfile.ZipFile(buffer)
    unit = b"<w:p><w:r><w:t>harbour budget line</w:t></w:r></w:p>"
    body = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w='
        b'"http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
        + unit * (int(mib * 2**20) // len(unit))
        + b"</w:body></w:document>"
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            is_body = info.filename == "word/document.xml"
            out.writestr(info.filename, body if is_body else source.read(info.filename))


def big_slide(path: Path, mib: float) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Budget"
    slide.shapes.add_textbox(Inches(1), Inches(2), Inches(6), Inches(1)).text = "harbour"
    buffer = io.BytesIO()
    deck.save(buffer)
    source = zipfile.ZipFile(buffer)
    run = b"<a:p><a:r><a:t>harbour budget line</a:t></a:r></a:p>"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info.filename)
            if info.filename == "ppt/slides/slide1.xml":
                marker = b"<a:t>harbour</a:t></a:r></a:p>"
                many = run * (int(mib * 2**20) // len(run))
                data = data.replace(marker, marker + many, 1)
            out.writestr(info.filename, data)


def log_file(path: Path, mb: float) -> None:
    line = "2026-11-26T12:00:00 INFO worker-{} processed batch {} of harbour ledger ok\n"
    with path.open("w", encoding="utf-8") as handle:
        n = 0
        while handle.tell() < mb * 1e6:
            handle.write("".join(line.format(i % 7, i) for i in range(n, n + 1000)))
            n += 1000


def sparse(path: Path, gib: float) -> None:
    with path.open("wb") as handle:
        handle.truncate(int(gib * 2**30))


def prose(path: Path, mb: float) -> None:
    paragraph = (
        "The harbour office keeps the ledger of every ship that berths at the quay. Each "
        "entry names the ship, its master, its cargo and the fee paid at departure.\n\n"
    )
    path.write_text(paragraph * int(mb * 1e6 // len(paragraph)), encoding="utf-8")


def base64_text(path: Path, mb: float) -> None:
    import base64

    block = base64.b64encode(bytes(range(256)) * 3072).decode("ascii")  # 1 MB, one line
    with path.open("w", encoding="ascii") as handle:
        for _ in range(max(1, round(mb))):
            handle.write(block)


def rst_roles(path: Path, kb: float) -> None:
    path.write_text("Title\n=====\n\n" + ":a" * int(kb * 512) + "\n", encoding="utf-8")


def md_brackets(path: Path, mb: float) -> None:
    path.write_text("# Brackets\n\n" + "[" * int(mb * 1e6) + "\n", encoding="utf-8")


def deep_html(path: Path, levels: float) -> None:
    posts = "".join(f"<div class=post>Reply {n}: the ferry is late" for n in range(int(levels)))
    path.write_text(f"<html><body>{posts}</body></html>", encoding="utf-8")


CASES = {
    "H1 pdf stream 400 MiB": ("bomb.pdf", pdf_bomb, 400),
    "H2 docx body 10 MiB": ("big.docx", big_docx, 10),
    "H2 pptx slide 200 MiB": ("big.pptx", big_slide, 200),
    "H3 log 40 MB, no blank line": ("app.log.txt", log_file, 40),
    "H4 sparse 8 GiB .txt": ("disk-image.txt", sparse, 8),
    "prose 20 MB": ("ledger.txt", prose, 20),
    # the 2026-11-28 re-probe (issue 67)
    "N-H1 base64 40 MB, no whitespace": ("blob.txt", base64_text, 40),
    "N-H3 rst 200 KB of :a": ("roles.rst", rst_roles, 200),
    "N-M3 html 2,000 levels deep": ("thread.html", deep_html, 2000),
    "N-H3 markdown 8 MB of [, --file-seconds 20": ("brackets.md", md_brackets, 8),
}
FLAGS = {"N-H3 markdown 8 MB of [, --file-seconds 20": ["--file-seconds", "20"]}


def run_case(work: Path, name: str, scale: float) -> str:
    file_name = CASES[name][0]
    folder = work / name.split()[0].lower() / "docs"
    shutil.rmtree(folder.parent, ignore_errors=True)
    folder.mkdir(parents=True)
    # made by a process of its own: a forked child's peak RSS counts its parent's pages at the
    # fork, so this process must never hold a case's bytes
    maker = [sys.executable, __file__, "--make", name, "--scale", str(scale), "--into", str(folder)]
    subprocess.run(maker, check=True)
    on_disk = (folder / file_name).stat().st_blocks * 512 / 1e6
    command = [sys.executable, "-m", "ragteam", "index", "sync", str(folder)]
    command += ["--out", str(folder.parent / "ix"), "--retriever", "bm25", *FLAGS.get(name, [])]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = process.stdout.read().decode("utf-8", "replace") if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    said = [line.strip() for line in output.splitlines() if file_name in line or "error" in line]
    return (
        f"| {name} | {on_disk:.1f} MB | {usage.ru_maxrss / 1024:.0f} MB | {seconds:.1f} s | "
        f"{os.waitstatus_to_exitcode(status)} | {(said or ['(nothing said)'])[0][:110]} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/hostile"))
    parser.add_argument("--scale", type=float, default=1.0, help="every size times this")
    parser.add_argument("--only", default="", help="run the cases whose name starts with this")
    parser.add_argument("--make", default="", help=argparse.SUPPRESS)
    parser.add_argument("--into", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.make:
        file_name, make, size = CASES[args.make]
        make(args.into / file_name, size * args.scale)
        return
    print("| case | file on disk | peak RSS | time | exit | what sync said |")
    print("|---|---|---|---|---|---|")
    for name in CASES:
        if name.startswith(args.only):
            print(run_case(args.work, name, args.scale), flush=True)


if __name__ == "__main__":
    main()
