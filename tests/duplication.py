"""Pairs of places in kronika's source that repeat the same logic.

A *place* is a run of six or more consecutive code lines of one file; two places
pair when their lines are the same, either to the letter or in shape (the same
lines with other names, strings and numbers). Pairs are counted per pair of files,
so two files sharing three runs are one pair, named by their longest run.

How lines are read (with Python's own tokenizer, so strings and comments are never
mistaken for code):

- blank lines, comments, docstrings that stand alone, lone punctuation (``)``,
  ``],``, ``):``) and import statements are passed over;
- white space is folded; for the shape, every name that is not a keyword becomes
  ``I``, every string ``S`` and every number ``N``;
- a run of six shapes that stands in more than eight places is too common to be
  one piece of logic (a signature layout, a guard idiom) and is not paired.

What does not count:

- *boilerplate*: a pair alike only in shape (no six lines the same to the letter)
  whose longest run is at least three quarters thin lines. A line is thin when its
  shape holds no name (keywords, punctuation, literal data such as ``S : S ,``), when
  at most a third of its tokens are names, strings or numbers (``I : I | None = None
  ,``), when it is framing (a decorator, a ``def`` or ``class`` line, an annotated
  name such as a parameter or a field, ``return`` of a name or an attribute, an
  attribute copy ``self.x = x``, a dict entry of a name or an attribute), or when its
  shape stands in at least ``COMMON_SHAPE_FILES`` files: signatures, declarations
  and field-by-field copies that every module writes and no function could share;
- data tables: the files in ``DATA_TABLES`` hold data written out per language, not
  logic.

The settings were chosen against a line-based duplicate finder (same six-line
windows, shapes and eight-place limit, lines read as text) on the tree of 2026-11-28:
of the 105 pairs of Python logic it listed, this check counts 60 (74 in all); most of
the other 45 are import lists, identical parameter lists and one-field-a-line
declarations, which this check passes over.

Run ``python tests/duplication.py`` to print every counted pair, longest first.
"""

from __future__ import annotations

import io
import keyword
import re
import sys
import token
import tokenize
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "kronika"
MIN_LINES = 6
MOST_PLACES = 8
# files of data written out per language: repeated in shape by design, not logic
DATA_TABLES = ("kronika/bench/memdata/",)
# a line shape standing in at least this many files is thin (a common idiom)
COMMON_SHAPE_FILES = 80
# a shape-only pair is boilerplate when at least this share of its run is thin
THIN_SHARE = 0.75
THIN_TOKENS = 1 / 3

# decorators, def and class lines, annotated names (parameters, fields), returns of a
# name or an attribute, attribute copies, dict entries of a name or an attribute
_FRAME = re.compile(r"@ |def |class |I : |return I( \. I)?$|I \. I = I$|S : I( \. I)? ,$")
_PUNCTUATION = set("()[]{},:;.") | {"->", ")->", "...", "*", "**", "/"}
_SKIPPED_TOKENS = {
    token.COMMENT,
    token.NL,
    token.NEWLINE,
    token.INDENT,
    token.DEDENT,
    token.ENDMARKER,
    token.ENCODING,
}
_FSTRING_START = getattr(token, "FSTRING_START", -1)
_FSTRING_END = getattr(token, "FSTRING_END", -1)


@dataclass(frozen=True)
class Line:
    number: int
    text: str
    shape: str


@dataclass(frozen=True)
class Pair:
    first: str
    first_lines: tuple[int, int]
    second: str
    second_lines: tuple[int, int]
    identical: bool
    boilerplate: bool
    runs: int

    def __str__(self) -> str:
        a, b = self.first_lines, self.second_lines
        tags = ("" if self.identical else " shape") + (" boilerplate" if self.boilerplate else "")
        more = f" (+{self.runs - 1} more runs)" if self.runs > 1 else ""
        return f"{self.first}:{a[0]}-{a[1]} ~ {self.second}:{b[0]}-{b[1]}{tags}{more}"


def code_lines(source: str) -> list[Line]:
    """The lines of a Python source that count, each with its folded text and shape."""
    texts: dict[int, list[str]] = defaultdict(list)
    shapes: dict[int, list[str]] = defaultdict(list)
    skipped: set[int] = set()
    statement_start = True
    in_import = False
    fstring_depth = 0
    fstring_line = 0
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        kind, string, (row, _), (end_row, _), _ = tok
        if kind == _FSTRING_START:
            if fstring_depth == 0:
                fstring_line = row
                texts[row].append(string)
            fstring_depth += 1
            continue
        if fstring_depth:
            if kind == _FSTRING_END:
                fstring_depth -= 1
                if fstring_depth == 0:
                    shapes[fstring_line].append("S")
            texts[fstring_line].append(string)
            continue
        if kind in _SKIPPED_TOKENS:
            if kind == token.NEWLINE:
                statement_start, in_import = True, False
            continue
        if statement_start:
            in_import = kind == token.NAME and string in ("import", "from")
            docstring = kind == token.STRING
            statement_start = False
            if docstring:  # a string standing alone is prose, not code
                skipped.update(range(row, end_row + 1))
        if in_import:
            skipped.update(range(row, end_row + 1))
            continue
        texts[row].append(string)
        if kind == token.NAME and not keyword.iskeyword(string):
            shapes[row].append("I")
        elif kind == token.NUMBER:
            shapes[row].append("N")
        elif kind == token.STRING:
            shapes[row].append("S")
        else:
            shapes[row].append(string)
    lines = []
    for row in sorted(texts):
        if row in skipped or all(part in _PUNCTUATION for part in texts[row]):
            continue
        lines.append(Line(row, " ".join(texts[row]), " ".join(shapes[row])))
    return lines


def read_tree(package: Path = PACKAGE) -> dict[str, list[Line]]:
    """Every Python file of the package but the data tables, by its path below src/."""
    files: dict[str, list[Line]] = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package.parent).as_posix()
        if name.startswith(DATA_TABLES):
            continue
        files[name] = code_lines(path.read_text(encoding="utf-8"))
    return files


def find_pairs(files: dict[str, list[Line]]) -> list[Pair]:
    """Every pair of places sharing runs of ``MIN_LINES`` lines, longest first."""
    shape_files: dict[str, set[str]] = defaultdict(set)
    for name, lines in files.items():
        for line in lines:
            shape_files[line.shape].add(name)
    thin = {
        shape
        for shape, where in shape_files.items()
        if len(where) >= COMMON_SHAPE_FILES or _thin(shape)
    }

    windows: dict[tuple[str, ...], list[tuple[str, int]]] = defaultdict(list)
    for name, lines in files.items():
        shapes = [line.shape for line in lines]
        for start in range(len(lines) - MIN_LINES + 1):
            windows[tuple(shapes[start : start + MIN_LINES])].append((name, start))

    # matched window starts per pair of files: (file a, file b) -> {(start a, start b)}
    matches: dict[tuple[str, str], set[tuple[int, int]]] = defaultdict(set)
    for places in windows.values():
        if len(places) < 2 or len(places) > MOST_PLACES:
            continue
        for first, second in combinations(sorted(places), 2):
            if first[0] == second[0] and second[1] - first[1] < MIN_LINES:
                continue  # one place overlapping itself
            matches[(first[0], second[0])].add((first[1], second[1]))

    pairs = []
    for (a, b), starts in matches.items():
        runs = _runs(starts)
        lines_a, lines_b = files[a], files[b]
        identical = any(
            all(lines_a[i + k].text == lines_b[j + k].text for k in range(MIN_LINES))
            for i, j in starts
        )
        i, j, length = max(runs, key=lambda run: (run[2], -run[0]))
        run = lines_a[i : i + length]
        thin_share = sum(line.shape in thin for line in run) / length
        pairs.append(
            Pair(
                first=a,
                first_lines=(run[0].number, run[-1].number),
                second=b,
                second_lines=(lines_b[j].number, lines_b[j + length - 1].number),
                identical=identical,
                boilerplate=not identical and thin_share >= THIN_SHARE,
                runs=len(runs),
            )
        )
    pairs.sort(key=lambda p: (p.boilerplate, -(p.first_lines[1] - p.first_lines[0]), str(p)))
    return pairs


def _thin(shape: str) -> bool:
    parts = shape.split()
    if "I" not in parts or _FRAME.match(shape):
        return True
    return sum(part in ("I", "S", "N") for part in parts) <= THIN_TOKENS * len(parts)


def _runs(starts: set[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """Matched window starts joined into runs: (start a, start b, lines)."""
    runs = []
    for i, j in sorted(starts):
        if (i - 1, j - 1) in starts:
            continue
        windows = 1
        while (i + windows, j + windows) in starts:
            windows += 1
        runs.append((i, j, windows + MIN_LINES - 1))
    return runs


def logic_pairs(package: Path = PACKAGE) -> list[Pair]:
    """The pairs that count: neither boilerplate nor data tables."""
    return [pair for pair in find_pairs(read_tree(package)) if not pair.boilerplate]


if __name__ == "__main__":
    found = find_pairs(read_tree())
    counted = [pair for pair in found if not pair.boilerplate]
    print(f"{len(found)} pairs, {len(found) - len(counted)} boilerplate, {len(counted)} counted")
    for pair in found if "--all" in sys.argv else counted:
        print(pair)
