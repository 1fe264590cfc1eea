"""Page furniture in the passages of real manuals (issue 87): the Debian FAQ (LaTeX; GPL-2+,
from `debian-faq`), the Nettle manual (Texinfo; LGPL-3+/GPL-2+, from `nettle-dev`) and the bzip2
manual (DocBook; BSD-style, from `bzip2-doc`), fetched with apt-get (nothing shipped here).

    python bench/pdf_furniture.py --work /tmp/furniture

Indexes the three PDFs with `ragteam index sync --retriever bm25` (the real conversion and
chunking), then counts the passages that hold each layout's furniture: the FAQ's running
header ("CHAPTER 3. CHOOSING A DEBIAN… 3.1. ..."), Texinfo's chapter header ("Chapter 4:
Example 5" on a line of its own) and contents entries with dotted leaders (". . . . 12"), and
the words the passages hold (every real passage kept: the words lost are the furniture's)."""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

PACKAGES = {
    "debian-faq": "usr/share/doc/debian/FAQ/debian-faq.en.pdf.gz",
    "nettle-dev": "usr/share/doc/nettle-dev/nettle.pdf.gz",
    "bzip2-doc": "usr/share/doc/bzip2/manual.pdf.gz",
}
PROBES = {
    "latex header": re.compile(r"^CHAPTER \d+\. .*\d+\.\d+\. ", re.MULTILINE),
    "texinfo header": re.compile(r"^Chapter \d+: [^\n]* \d+$", re.MULTILINE),
    "dotted leaders": re.compile(r"(?:\. ){5,}\.? ?\d{1,4}\b"),
}


def fetch(work: Path) -> Path:
    """The three PDFs, unpacked into work/pdfs."""
    pdfs = work / "pdfs"
    pdfs.mkdir(parents=True, exist_ok=True)
    for package, inside in PACKAGES.items():
        target = pdfs / f"{package}.pdf"
        if target.is_file():
            continue
        if not list(work.glob(f"{package}_*.deb")):
            subprocess.run(["apt-get", "download", package], cwd=work, check=True)
        deb = next(work.glob(f"{package}_*.deb"))
        subprocess.run(["dpkg", "-x", str(deb), str(work / package)], check=True)
        target.write_bytes(gzip.decompress((work / package / inside).read_bytes()))
    return pdfs


def count(index: Path) -> dict[str, dict[str, int]]:
    """Per file: passages, words, and passages each probe finds."""
    out: dict[str, dict[str, int]] = {}
    with (index / "passages.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            passage = json.loads(line)
            row = out.setdefault(
                passage["doc_id"], {"passages": 0, "words": 0, **dict.fromkeys(PROBES, 0)}
            )
            row["passages"] += 1
            row["words"] += len(passage["text"].split())
            for probe, pattern in PROBES.items():
                row[probe] += bool(pattern.search(passage["text"]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    args = parser.parse_args()
    pdfs = fetch(args.work)
    index = args.work / "index"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "ragteam",
            "index",
            "sync",
            str(pdfs),
            "--out",
            str(index),
            "--retriever",
            "bm25",
        ],
        check=True,
    )
    print(json.dumps(count(index), indent=1))


if __name__ == "__main__":
    main()
