"""Documents benchmark on real published files nobody here wrote: the Debian Reference
(Osamu Aoki; GPL-2+), its PDF and its HTML chapters, from Debian's `debian-reference-en`
package, fetched with apt-get and checked by SHA-256 (nothing is shipped in the repo).

    python bench/documents.py --work /tmp/docbench [--dense]

Reports conversion speed (pages/s, peak memory), then the cost of syncs: the first build,
nothing changed (1,000 extra small files), one file touched, one PDF page edited, one file
renamed, one deleted; each with seconds and passages embedded."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

PACKAGE = "debian-reference-en"
PDF = "usr/share/debian-reference/debian-reference.en.pdf"


def fetch(work: Path) -> Path:
    root = work / "pkg"
    if not (root / PDF).is_file():
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["apt-get", "download", PACKAGE], cwd=work, check=True)
        deb = next(work.glob(f"{PACKAGE}_*.deb"))
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    return root


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def conversion_speed(pdf: Path, htmls: list[Path]) -> dict:
    from ragteam.documents import ConvertSettings, converter_for

    settings = ConvertSettings()
    started = time.perf_counter()
    doc = converter_for(pdf).convert(pdf, settings)
    seconds = time.perf_counter() - started
    pages = max(u.where.page for u in doc.units)
    html_times = []
    for page in htmls:
        t = time.perf_counter()
        converter_for(page).convert(page, settings)
        html_times.append(time.perf_counter() - t)
    return {
        "pdf": pdf.name,
        "pdf_sha256": sha(pdf),
        "pages": pages,
        "pdf_seconds": round(seconds, 3),
        "pages_per_s": round(pages / seconds, 1),
        "pages_with_section": sum(1 for u in doc.units if u.where.section),
        "pages_with_label": sum(1 for u in doc.units if u.where.page_label),
        "html_files": len(htmls),
        "html_s_per_file": round(sum(html_times) / len(html_times), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def edit_page(pdf: Path, page: int, text: str) -> None:
    """Replace the text of one page of `pdf` (pypdf, the rest of the file cloned as it was:
    other pages, page labels, outline)."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ContentStream
    from reportlab.pdfgen import canvas

    one = pdf.with_suffix(".one.pdf")
    c = canvas.Canvas(str(one))
    c.drawString(72, 760, text)
    c.showPage()
    c.save()
    writer = PdfWriter(clone_from=str(pdf))
    target = writer.pages[page]
    target.replace_contents(ContentStream(None, writer))
    target.merge_page(PdfReader(str(one)).pages[0])
    one.unlink()
    tmp = pdf.with_suffix(".tmp")
    with tmp.open("wb") as handle:
        writer.write(handle)
    os.replace(tmp, pdf)


def sync_costs(root: Path, work: Path, dense: bool) -> list[dict]:
    from ragteam.retrieval import sync_folder
    from ragteam.retrieval.index import IndexSettings

    folder, out = work / "folder", work / "index"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    (folder / "notes").mkdir(parents=True)
    shutil.copy(root / PDF, folder / "reference.pdf")
    for page in sorted((root / "usr/share/debian-reference").glob("*.html")):
        shutil.copy(page, folder / page.name)
    for n in range(1000):
        (folder / "notes" / f"note-{n:04d}.txt").write_text(f"Note {n}: shelf {n % 37}.\n")
    settings = IndexSettings(retriever="hybrid" if dense else "bm25")
    rows = []

    def step(name: str, change) -> None:
        change()
        report = sync_folder(folder, out, index=settings)
        rows.append(
            {
                "step": name,
                "seconds": report.seconds,
                "converted": report.converted,
                "embedded": report.embedded,
                "rewritten": report.rewritten,
                "passages": report.manifest.get("passage_count"),
                "changes": {k: len(v) for k, v in report.changes.items() if v},
            }
        )

    step("first build", lambda: None)
    step("nothing changed", lambda: None)
    step("one file touched (mtime)", lambda: os.utime(folder / "ch01.en.html"))
    step(
        "one PDF page edited",
        lambda: edit_page(
            folder / "reference.pdf", 40, "The benchmark page: this text replaced page 41."
        ),
    )
    step("one file renamed", lambda: (folder / "ch02.en.html").rename(folder / "two.html"))
    step("one file deleted", lambda: (folder / "ch03.en.html").unlink())
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/tmp/docbench"))
    parser.add_argument("--dense", action="store_true", help="hybrid index (embeddings)")
    args = parser.parse_args()
    os.environ.setdefault("XDG_CACHE_HOME", str(args.work / "cache"))
    root = fetch(args.work)
    htmls = sorted((root / "usr/share/debian-reference").glob("*.html"))
    print(json.dumps(conversion_speed(root / PDF, htmls), indent=1))
    for row in sync_costs(root, args.work, args.dense):
        print(json.dumps(row))


if __name__ == "__main__":
    main()
