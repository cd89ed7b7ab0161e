"""The tables of a rendered report, read back (standard-library HTML parser): what a reader actually sees."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser


@dataclass
class Cell:
    text: str
    title: str = ""
    classes: str = ""
    nist: str = ""  # NIST's statistic shown below the headline (<small class="nist">), A.1 tables


@dataclass
class Table:
    classes: str
    section: str
    head: list[str] = field(default_factory=list)
    rows: list[list[Cell]] = field(default_factory=list)

    def row(self, label: str) -> list[Cell]:
        """The first row whose first cell is `label`."""
        for r in self.rows:
            if r and r[0].text == label:
                return r
        raise KeyError(f"no row '{label}' in table {self.classes} of {self.section}: "
                       f"{[r[0].text for r in self.rows if r]}")

    def column(self, name: str) -> int:
        for i, h in enumerate(self.head):
            if h == name or h.startswith(name):
                return i
        raise KeyError(f"no column '{name}' in {self.head}")

    def cell(self, label: str, column: str) -> Cell:
        return self.row(label)[self.column(column)]


class _Parser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: list[Table] = []
        self.sections: list[str] = []
        self._table: Table | None = None
        self._row: list[Cell] | None = None
        self._cell: Cell | None = None
        self._in_head = False
        self._depth = 0
        self._in_nist = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id", ""))
        elif tag == "table":
            self._table = Table(a.get("class", ""), self.sections[-1] if self.sections else "")
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = Cell("", a.get("title", ""), a.get("class", ""))
        elif tag == "br" and self._cell is not None:
            self._cell.text += " "
        elif tag == "small" and self._cell is not None and "nist" in a.get("class", "").split():
            self._in_nist = True

    def handle_endtag(self, tag):
        if tag == "small" and self._in_nist:
            self._in_nist = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._cell.text = " ".join(self._cell.text.split())
            self._cell.nist = self._cell.nist.strip()
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table is not None:
            if self._in_head:
                self._table.head = [c.text for c in self._row]
            else:
                self._table.rows.append(self._row)
            self._row = None
        elif tag == "thead":
            self._in_head = False
        elif tag == "table" and self._table is not None:
            self.tables.append(self._table)
            self._table = None

    def handle_data(self, data):
        if self._cell is not None and self._in_nist:
            self._cell.nist += data
        elif self._cell is not None:
            self._cell.text += data


def tables(html: str) -> list[Table]:
    p = _Parser()
    p.feed(html)
    return p.tables


def find(html_or_tables, css_class: str, section: str | None = None) -> list[Table]:
    ts = tables(html_or_tables) if isinstance(html_or_tables, str) else html_or_tables
    return [t for t in ts if css_class in t.classes.split() and (section is None or t.section == section)]


def number(text: str) -> float:
    """'1,234.5 †' -> 1234.5"""
    return float(text.replace(",", "").replace("†", "").replace("‡", "").strip())
