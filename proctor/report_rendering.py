"""The incident report (proctor.incident_report) rendered: a printable HTML page and a PDF with the same content, in
the report's language.  Every text of the HTML is escaped; the stills are inlined (``data:`` URIs, the page loads
nothing).  The event's time zone is named at the top and on every printed page (the HTML's print footer, the PDF's
page footer)."""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path

from proctor.errors import ConfigurationError
from proctor.incident_report import CaseSection, IncidentReport

CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
"""The HTML report's: its own style, its inlined stills, nothing else."""

_STYLE = (
    "body{font-family:sans-serif;margin:2em;}table{border-collapse:collapse;margin:.3em 0 .8em;}"
    "th,td{border:1px solid #999;padding:.2em .5em;text-align:left;vertical-align:top;}"
    "section.case{break-inside:avoid-page;margin-bottom:1.5em;border-top:2px solid #333;}"
    "code{font-size:.85em;word-break:break-all;}figure{display:inline-block;margin:.3em;}"
    "figure img{max-width:16em;max-height:12em;border:1px solid #999;}figcaption{font-size:.8em;}"
    ".signature td{min-width:16em;height:2.2em;}.zone{font-weight:bold;}"
    "footer.page{display:none;}"
    "@media print{body{margin:0 0 2.5em;}footer.page{display:block;position:fixed;bottom:0;left:0;right:0;"
    "font-size:.8em;border-top:1px solid #999;background:#fff;}}"
)


def report_html(report: IncidentReport) -> str:
    """A printable HTML page of the report."""
    e, w = html.escape, report.words
    parts = [
        "<!DOCTYPE html>", f'<html lang="{w("html.lang")}">', "<head>", '<meta charset="utf-8">',
        f"<title>{e(report.heading)}</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
        f'<footer class="page">{e(report.heading)} · {e(report.zone_line)}</footer>',
        f"<h1>{e(report.heading)}</h1>", f'<p class="zone">{e(report.zone_line)}</p>',
        f'<p class="generated">{e(report.generated)}</p>',
        f'<section class="summary"><h2>{e(w("summary"))}</h2>',
    ]  # fmt: skip
    if report.summary:
        headers = ("col.who", "col.kind", "col.cases", "col.occurrences", "col.duration", "col.first", "col.last",
                   "col.outcome")  # fmt: skip
        parts.append("<table><tr>" + "".join(f"<th>{e(w(h))}</th>" for h in headers) + "</tr>")
        for row in report.summary:
            cells = (row.who, row.kind, str(row.cases), str(row.occurrences), row.duration, row.first, row.last,
                     row.outcome)  # fmt: skip
            parts.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
        parts.append("</table>")
    else:
        parts.append(f"<p>{e(w('summary.none'))}</p>")
    parts.append(f"</section><h2>{e(w('cases'))}</h2>")
    for section in report.sections:
        parts.append(f'<section class="case"><h3>{e(section.heading)}</h3><table class="facts">')
        parts += [f"<tr><th>{e(label)}</th><td>{e(value)}</td></tr>" for label, value in section.facts]
        parts.append(f'</table><h4>{e(w("occurrences"))}</h4><table class="occurrences">')
        parts.append(f"<tr><th>{e(w('col.when'))}</th><th>{e(w('col.what'))}</th></tr>")
        parts += [f"<tr><td>{e(when)}</td><td>{e(what)}</td></tr>" for when, what in section.occurrences]
        parts.append(f"</table><h4>{e(w('evidence'))}</h4>")
        stills = [item for item in section.evidence if item.still is not None]
        for item in stills:
            data = base64.b64encode(item.still or b"").decode()
            caption = w("still.caption", name=item.name, incident=item.incident)
            parts.append(f'<figure><img src="data:image/jpeg;base64,{data}" alt="{e(caption)}">'
                         f"<figcaption>{e(caption)}</figcaption></figure>")  # fmt: skip
        if section.evidence:
            parts.append(f'<table class="evidence"><tr><th>{e(w("col.file"))}</th><th>SHA-256</th>'
                         f"<th>{e(w('col.check'))}</th></tr>")  # fmt: skip
            parts += [f"<tr><td>{e(item.name)}</td><td><code>{e(item.sha256)}</code></td><td>{e(item.check)}</td></tr>"
                      for item in section.evidence]  # fmt: skip
            parts.append("</table>")
        else:
            parts.append(f"<p>{e(w('evidence.none'))}</p>")
        parts.append(f"<h4>{e(w('actions'))}</h4>")
        if section.actions:
            parts.append(f'<table class="actions"><tr><th>{e(w("col.when"))}</th><th>{e(w("col.who.acted"))}</th>'
                         f"<th>{e(w('col.what'))}</th></tr>")  # fmt: skip
            parts += [f"<tr><td>{e(a.when)}</td><td>{e(a.who)}</td><td>{e(a.what)}</td></tr>" for a in section.actions]
            parts.append("</table>")
        else:
            parts.append(f"<p>{e(w('actions.none'))}</p>")
        parts.append(
            f'<p class="verdict"><strong>{e(w("verdict") + w.colon)}</strong>{e(section.verdict)}</p></section>'
        )
    s = report.signature
    parts += [
        f'<section class="signature"><h2>{e(s.heading)}</h2><table>',
        f"<tr><th>{e(s.name_label)}</th><td>{e(s.name)}</td></tr>",
        f"<tr><th>{e(s.date_label)}</th><td></td></tr>",
        f"<tr><th>{e(s.sign_label)}</th><td></td></tr>",
        f"</table><p>{e(report.zone_line)}</p></section>",
        "</body>", "</html>",
    ]  # fmt: skip
    return "\n".join(parts) + "\n"


def report_pdf(report: IncidentReport, font: str) -> bytes:
    """The same content as :func:`report_html`, as an A4 PDF (fpdf2) in ``font`` (a TTF or TTC with CJK glyphs);
    every page's footer names the report, the time zone and the page.  ConfigurationError when the font is missing
    or unusable."""
    if not Path(font).is_file():
        raise ConfigurationError(
            f"the PDF report's font {font} is missing: install Debian's fonts-wqy-microhei, or set PROCTOR_PDF_FONT to "
            "a TrueType font (TTF or TTC) with CJK glyphs; the HTML report (/api/v1/reports/incidents.html) needs "
            "no font"
        )
    writer = _PdfWriter(report, font)
    writer.front()
    for section in report.sections:
        writer.section(section)
    writer.signature()
    return writer.output()


class _PdfWriter:
    def __init__(self, report: IncidentReport, font: str) -> None:
        from fpdf import FPDF  # noqa: PLC0415  (loaded on the first PDF only)

        w = self.w = report.words
        self.report = report

        class ReportPDF(FPDF):
            def footer(self) -> None:
                self.set_y(-12)
                self.set_font("report", size=7)
                page = w("page", page=self.page_no(), pages="{nb}")
                self.cell(0, 5, f"{report.heading} · {report.zone_line} · {page}", align="C")

        pdf = self.pdf = ReportPDF(format="A4")
        try:
            pdf.add_font("report", "", font)
        except Exception as error:  # fpdf2 raises several kinds for a file that is not a usable font
            raise ConfigurationError(f"the PDF report's font {font} cannot be used: {error}") from None
        pdf.set_title(report.heading)
        pdf.set_lang(w("html.lang"))
        pdf.set_auto_page_break(auto=True, margin=18)
        pdf.alias_nb_pages()
        pdf.add_page()

    def line(self, text: str, size: float = 9, height: float = 4.6) -> None:
        from fpdf.enums import XPos, YPos  # noqa: PLC0415

        self.pdf.set_font("report", size=size)
        self.pdf.multi_cell(0, height, text, align="L", new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    def table(self, headers: tuple[str, ...], rows: Sequence[tuple[str, ...]], widths: tuple[int, ...],
              size: float = 7.5) -> None:  # fmt: skip
        from fpdf.fonts import FontFace  # noqa: PLC0415

        self.pdf.set_font("report", size=size)
        headings = FontFace(emphasis="", fill_color=(230, 230, 230))  # the CJK font has no bold face
        with self.pdf.table(headings_style=headings, col_widths=widths, text_align="LEFT", line_height=size * 0.5,
                            first_row_as_headings=True, padding=0.8) as grid:  # fmt: skip
            grid.row(headers)
            for cells in rows:
                grid.row(cells)

    def front(self) -> None:
        report, w = self.report, self.w
        self.line(report.heading, 16, 8)
        self.line(report.zone_line, 10, 5)
        self.line(report.generated)
        self.pdf.ln(2)
        self.line(w("summary"), 12, 6)
        if report.summary:
            headers = tuple(w(h) for h in ("col.who", "col.kind", "col.cases", "col.occurrences", "col.duration",
                                           "col.first", "col.last", "col.outcome"))  # fmt: skip
            rows = [(r.who, r.kind, str(r.cases), str(r.occurrences), r.duration, r.first, r.last, r.outcome)
                    for r in report.summary]  # fmt: skip
            self.table(headers, rows, (22, 16, 8, 8, 13, 20, 20, 30))
        else:
            self.line(w("summary.none"))
        self.pdf.ln(2)
        self.line(w("cases"), 12, 6)

    def section(self, section: CaseSection) -> None:
        w = self.w
        self.pdf.ln(3)
        self.line(section.heading, 11, 6)
        for label, value in section.facts:
            self.line(f"{label}{w.colon}{value}", 8.5, 4.4)
        self.line(w("occurrences"), 10, 5)
        self.table((w("col.when"), w("col.what")), list(section.occurrences), (22, 78))
        self.line(w("evidence"), 10, 5)
        for item in section.evidence:
            if item.still is not None:
                try:
                    self.pdf.image(io.BytesIO(item.still), w=55)
                    self.line(w("still.caption", name=item.name, incident=item.incident), 7, 3.6)
                except Exception:  # a still fpdf2 cannot embed is listed below all the same
                    continue
        for item in section.evidence:  # a hash on a line of its own, so that it is never broken
            self.line(f"{item.name}{w.colon}{item.check}", 8, 4)
            self.line(f"SHA-256 {item.sha256}", 7, 3.8)
        if not section.evidence:
            self.line(w("evidence.none"))
        self.line(w("actions"), 10, 5)
        if section.actions:
            actions = [(a.when, a.who, a.what) for a in section.actions]
            self.table((w("col.when"), w("col.who.acted"), w("col.what")), actions, (20, 20, 60))
        else:
            self.line(w("actions.none"))
        self.line(f"{w('verdict')}{w.colon}{section.verdict}", 10, 5)

    def signature(self) -> None:
        s = self.report.signature
        self.pdf.ln(6)
        self.line(s.heading, 12, 6)
        for label, value in ((s.name_label, s.name), (s.date_label, ""), (s.sign_label, "")):
            self.line(f"{label}{self.w.colon}{value or '_' * 40}", 10, 8)
        self.line(self.report.zone_line, 8, 4)

    def output(self) -> bytes:
        return bytes(self.pdf.output())
