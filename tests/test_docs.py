"""The README and docs/ link only to files and headings that exist, the configuration table
in docs/daemon.md names every option with the defaults the code has (one home: the code), and the
headline figures they quote are those their commands produced (docs/results/headlines.json)."""

import json
import re
import string
from pathlib import Path

import pytest

from distractd.daemon import DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page):
    return {_slug(line.lstrip("#")) for line in page.read_text().splitlines()
            if re.match(r"#{1,6} ", line)}


def _relative_links(page):
    for target in LINK.findall(page.read_text()):
        if not re.match(r"[a-z]+:", target):
            yield target


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in _relative_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: broken links {broken}"


def _configuration_table():
    """The option table of docs/daemon.md's "Configuration": {section: {option: cell text}}."""
    text = (ROOT / "docs" / "daemon.md").read_text()
    section = text.split("\n## Configuration\n", 1)[1].split("\n## ", 1)[0]
    table = {}
    for row in re.findall(r"^\| `(\w+)` \| (.+) \|$", section, flags=re.MULTILINE):
        name, cell = row
        table[name] = dict(re.findall(r"(?:^|, )`(\w+)`((?: \([^()]*\))?)(?=,|:|$)", cell))
    return table


def _literal(text):
    """The value a parenthesised default in the table starts with: a number, a boolean or a word."""
    token = re.match(r"\(([^\s,):]+)", text).group(1)
    if token in ("true", "false"):
        return token == "true"
    try:
        return float(token)
    except ValueError:
        return token


def test_the_configuration_table_lists_every_option_with_the_true_defaults():
    table = _configuration_table()
    assert set(table) == set(DEFAULTS)
    for section, options in DEFAULTS.items():
        assert set(table[section]) == set(options), section
        for option, note in table[section].items():
            if not note or not re.match(r" \((true|false|[\d.]+)\b", note):
                continue
            default = options[option]
            literal = _literal(note.strip())
            expected = default if isinstance(default, (bool, str)) else float(default)
            assert literal == expected, (f"docs/daemon.md: {section}.{option} says "
                                         f"{note.strip()}, the default is {default!r}")


HEADLINES = ROOT / "docs" / "results" / "headlines.json"


class _Figures(string.Formatter):
    """``str.format`` with one more spec, ``pct``: a share (0..1) as a percentage with one
    decimal and a space before the sign, as the docs write them (``0.9445`` -> ``94.5 %``)."""

    def format_field(self, value, spec):
        if spec == "pct":
            return f"{100 * value:.1f} %"
        return super().format_field(value, spec)


def _flat(text):
    return " ".join(text.split())


def test_documented_headlines_match_the_figures_their_command_produced():
    """Every headline figure the README and docs/ quote is rendered from the figures its command
    wrote (docs/results/headlines.json: the command, the commit, the output's numbers) and must
    appear in the page: a figure edited in the page alone, or a new measurement recorded without
    the page following, fails here. The commands themselves are too heavy for CI."""
    headlines = json.loads(HEADLINES.read_text())
    assert headlines
    for name, entry in headlines.items():
        assert {"command", "commit", "date", "results", "values", "quotes"} <= set(entry), name
        results = ROOT / entry["results"]
        assert results.exists() and entry["commit"] in results.read_text(), (
            f"{name}: {entry['results']} must give the measurement's commit {entry['commit']}")
        for page, quotes in entry["quotes"].items():
            text = _flat((ROOT / page).read_text())
            for quote in quotes:
                rendered = _Figures().format(quote, **entry["values"])
                assert _flat(rendered) in text, f"{page} no longer says {rendered!r} ({name})"
