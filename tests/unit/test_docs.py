"""The docs name only what the repository holds, and point nowhere outside it.

Files move (targets/cpu/*.py went into rooms, frontend/ gave torch.compile's side to dynamo/), and a doc that
still names the old place sends its reader nowhere. This test reads README.md and docs/*.md as text and checks
every path they name (and the Python sources for pointers outside). The rule, precisely:

A word is the text between blanks, backticks, quotes, brackets, commas, semicolons, colons and pipes, less a
`#anchor` and a final full stop. A word names a path when it
  - has a `/` between two names and its first name is an entry of the repository root (`targets/cpu/`,
    `tests/numeric`, `.ci/run`), or
  - has a `/` and ends with a file suffix (`reference/loop.py`), or
  - ends with a file suffix after a name (`options.py`, `guide.md`), or
  - is one name ending with `/` (`codegen/`).
A path with a `/` inside must exist from the repository root or from docs/ (links in docs/*.md are written
from there). A single name (`emit.py`, `codegen/`) must be a file or folder of that name somewhere in the
repository: the text around it says which. A module with an attribute (`lowering/pipeline.run`) is the
module's `.py` file.

A citation is a `.py` path followed by a code name after one space (`targets/triton/runtime.py TritonRunner`),
or after `: ` inside one code span (`` `bench/models.py: SelfAttention` ``; outside one, a colon begins prose);
or a module with an attribute. A code name has an underscore, a capital after a small letter, three or more
capitals (`SCALAR`), or is called (`run()`). The file must define that name (`def`, `class`, or an assignment
at the start of a line), not only import it: the citation points at where the thing is.

Not paths: URLs, absolute and home paths (`/proc/cpuinfo`, `~/.cache/irc`), variables and placeholders (`$X`,
`<time>`, `*`, `{json,md}`), and the files irc, its tools and the reader write, which GENERATED lists.
"""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository root is the `irc` package
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SUFFIXES = ("py", "md", "toml", "sh", "json", "png", "mlir", "txt", "cfg", "ini", "yaml", "yml")
# Folders that are not the repository's: tools' state, build outputs, the virtual environment.
NOT_SOURCES = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache", "build", "results"}

# Files and folders that irc, its tools or the reader write, named in the docs as examples.
GENERATED = [
    re.compile(p)
    for p in (
        r"bench/results/.*",  # compare's JSON, tables and figures (ignored by git)
        r"\.?irc-fuzz/.*|CORPUS/.*|failures/.*|NNN-.*|running\.(py|mlir)",  # the fuzzer's corpus
        r"(.*/)?graph\d+-[\w-]+/.*|\d\d-[\w.-]+\.(mlir|py)|dumps/.*|irc-dump/?|call\.py",  # dumps of stages
        r"latest\.md",  # compare's newest table, in bench/results/
        r"(file|bad|g|sa\.\w+|irc-opt-reproducer)\.mlir|my_models\.py|train\.py",  # the reader's own files
    )
]

SEP = re.compile(r"[\s`'\"(),;:\[\]|!]+")
SUFFIX = re.compile(rf"[\w-]\.({'|'.join(SUFFIXES)})$")
CODE_NAME = r"(?:\w*_\w*|[a-z]\w*[a-z][A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Z][A-Z0-9]{2,}|\w+(?=\(\)))\b"
# `path.py NAME` anywhere, `path.py: NAME` only inside one code span (outside, a colon begins prose)
CITATION = re.compile(rf"(?<![\w./-])([\w./-]+\.py)`? `?({CODE_NAME})|`([\w./-]+\.py): ({CODE_NAME})")
# written in two pieces so that this file does not name what it looks for
OUTSIDE = re.compile(r"\.\./|\bDESIGN\.md\b|\bCONVENTIONS\.md\b|(?<![\w./-])shared" r"/")


def _sources() -> list[Path]:
    """Every file and folder of the repository, without NOT_SOURCES (which the walk does not enter)."""
    found = []
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in NOT_SOURCES and not d.endswith(".egg-info")]
        found += [Path(top) / n for n in (*dirs, *files)]
    return found


def _words(text: str):
    """(line number, word) for every word of the text, URLs left out."""
    for n, line in enumerate(text.splitlines(), 1):
        for word in SEP.split(re.sub(r"\w+://\S+", " ", line)):
            word = word.split("#", 1)[0].removesuffix(".")
            if word:
                yield n, word


def _is_path(word: str, top: set[str]) -> bool:
    if word.startswith(("/", "~")) or re.search(r"[$<>*{}=]", word) or any(g.fullmatch(word) for g in GENERATED):
        return False
    inner = "/" in word.rstrip("/")
    return bool(inner and word.split("/")[0] in top or SUFFIX.search(word) or re.fullmatch(r"[\w.-]+/", word))


def _defines(path: Path, name: str) -> bool:
    return re.search(rf"^\s*(def|class)\s+{name}\b|^\s*{name}\s*[:=]", path.read_text(), re.MULTILINE) is not None


def _missing(doc: Path, sources: list[Path]) -> list[str]:
    top = {p.name for p in ROOT.iterdir()}
    names = {p.name for p in sources}
    text = doc.read_text()
    bad = []
    for n, word in _words(text):
        if not _is_path(word, top):
            continue
        module = re.fullmatch(r"([\w./-]+/\w+)\.(\w+)", word)
        if module and module[2] not in SUFFIXES:  # `lowering/pipeline.run`: a module and its attribute
            files = [d / f"{module[1]}.py" for d in (ROOT, ROOT / "docs")]
            file = next((f for f in files if f.is_file()), None)
            if file is None or not _defines(file, module[2]):
                bad.append(f"{doc.name}:{n}: {word}")
            continue
        if "/" in word.rstrip("/"):
            found = (ROOT / word).exists() or (ROOT / "docs" / word).exists()
        else:
            found = word.rstrip("/") in names
        if not found:
            bad.append(f"{doc.name}:{n}: {word}")
    for m in CITATION.finditer(text):
        path, name = (m[1], m[2]) if m[1] else (m[3], m[4])
        file = ROOT / path
        if file.is_file() and not _defines(file, name):
            bad.append(f"{doc.name}:{text.count(chr(10), 0, m.start()) + 1}: {path} {name} (not defined there)")
    return bad


def test_every_path_the_docs_name_exists():
    sources = _sources()
    bad = [b for doc in DOCS for b in _missing(doc, sources)]
    assert bad == [], "names in the docs that the repository does not hold:\n" + "\n".join(bad)


def test_no_doc_points_outside_the_repository():
    # The docs travel with the repository: a pointer to notes beside it is a dead link for every other reader.
    bad = [
        f"{p.relative_to(ROOT)}:{n}: {m[0]}"
        for p in [*DOCS, *(s for s in _sources() if s.suffix == ".py")]
        for n, line in enumerate(p.read_text().splitlines(), 1)
        for m in OUTSIDE.finditer(line)
        if p.suffix == ".md" or "../" not in m[0]
    ]
    assert bad == [], "docs that point outside the repository:\n" + "\n".join(bad)


def test_the_readme_keeps_the_section_plots_fills():
    # bench/plots.py --publish replaces the text between the two markers and fails without them.
    from irc.bench import plots

    text = (ROOT / "README.md").read_text()
    assert text.count(plots.MARK_START) == 1 and text.count(plots.MARK_END) == 1
    assert text.index(plots.MARK_START) < text.index(plots.MARK_END)
