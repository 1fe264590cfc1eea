"""Print HTML documents to PDF with Chromium, beside each file as NAME.html.pdf, so that the
reader's training can read the same table questions over a PDF's lines (`ragteam train reader
--documents DIR`, its `doc_pdfs` setting: docs/benchmarks.md §34).

    python bench/print_pdfs.py DIR --most 400

Only files holding a <table> are printed, a seeded sample of `--most` of them; a file already
printed is skipped (run it again to go on). Debian's `chromium` and Playwright, as the browser
tests use them; nothing is fetched."""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import time
from pathlib import Path


def printable(folder: Path) -> list[Path]:
    found = []
    for path in sorted(folder.rglob("*")):
        html = path.suffix.lower() in (".html", ".htm") and path.is_file()
        if html and "<table" in path.read_text(encoding="utf-8", errors="replace").lower():
            found.append(path)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--most", type=int, default=400)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        print("no Chromium installed (apt-get install chromium)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    files = printable(args.folder)
    random.Random(args.seed).shuffle(files)
    files = files[: args.most]
    began, done = time.perf_counter(), 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.route("http*://**", lambda route: route.abort())  # nothing leaves the machine
        for n, path in enumerate(files, 1):
            out = path.with_name(path.name + ".pdf")
            if out.exists():
                continue
            page.goto(path.resolve().as_uri(), wait_until="load")
            tmp = out.with_name(out.name + ".tmp")
            page.pdf(path=str(tmp), format="A4", print_background=False)
            tmp.replace(out)
            done += 1
            if n % 25 == 0:
                print(f"{n}/{len(files)} ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
        browser.close()
    print(f"printed {done} of {len(files)} files in {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
