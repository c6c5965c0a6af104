"""Jinja2 templates of the report, embedded as strings (no package data to ship).

Rendered with autoescape ON: every dataset string is escaped; only values built by
:mod:`pairaudit.report.diff` (escaped segment by segment) are passed as ``Markup``.
The page loads nothing: a Content-Security-Policy meta forbids every fetch except ``data:`` images and
inline styles, and every script but the one table script of :mod:`pairaudit.report.table` (by its hash).
"""

from __future__ import annotations

CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'")

CSS = """
.pa-root{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1d1d1f}
.pa-root h1{font-size:24px;margin:.2em 0 .4em}
.pa-root h2{font-size:19px;margin:1.6em 0 .5em;border-bottom:2px solid #e3e3e8;padding-bottom:.2em}
.pa-root h3{font-size:15px;margin:1.1em 0 .4em}
.pa-root table{border-collapse:collapse;margin:.4em 0 .8em}
.pa-root th,.pa-root td{border:1px solid #d8d8de;padding:3px 8px;text-align:left;vertical-align:top}
.pa-root th{background:#f3f3f6}
.pa-root td.num{text-align:right;font-variant-numeric:tabular-nums}
.pa-root pre{white-space:pre-wrap;word-break:break-word;margin:0;font:12.5px/1.4 ui-monospace,"DejaVu Sans Mono",monospace}
.pa-cards{display:flex;gap:12px;flex-wrap:wrap;margin:.6em 0}
.pa-card{border:1px solid #d8d8de;border-radius:8px;padding:8px 16px;min-width:110px;background:#fafafc}
.pa-card b{display:block;font-size:22px}
.pa-card.drop b{color:#b42318}.pa-card.flag b{color:#b54708}.pa-card.keep b{color:#027a48}
.pa-alert{border:2px solid #b42318;background:#fef3f2;border-radius:8px;padding:8px 14px;margin:.8em 0}
.pa-note{border:1px solid #98a2b3;background:#f9fafb;border-radius:8px;padding:8px 14px;margin:.8em 0}
.pa-status-skipped,.pa-status-failed{background:#fef3f2;color:#b42318;font-weight:600}
.pa-act-drop{color:#b42318;font-weight:600}.pa-act-flag{color:#b54708;font-weight:600}
.pa-plots{display:flex;flex-wrap:wrap;gap:14px}
.pa-plot{border:1px solid #e3e3e8;border-radius:8px;padding:6px;margin:0;flex:1 1 calc(50% - 14px);min-width:320px;max-width:660px;box-sizing:border-box}
.pa-plot img{max-width:100%;height:auto;display:block}
.pa-plot p{margin:.2em .3em;color:#555;font-size:12.5px}
.pa-pair{border:1px solid #d8d8de;border-radius:8px;margin:.7em 0;padding:8px 10px;background:#fff}
.pa-pair.member{margin-left:28px;border-style:dashed}
.pa-pair-head{display:flex;gap:12px;flex-wrap:wrap;align-items:baseline;margin-bottom:4px}
.pa-pair-head .row{font-weight:700}
.pa-tag{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;background:#eef;border:1px solid #ccd}
.pa-tag.drop{background:#fee4e2;border-color:#fda29b}.pa-tag.flag{background:#fef0c7;border-color:#fec84b}
.pa-prompt{background:#f6f6f9;border-radius:6px;padding:6px 8px;margin:4px 0;max-height:16em;overflow:auto}
.pa-sides{display:grid;grid-template-columns:1fr 1fr;gap:10px}
.pa-side{border-radius:6px;padding:6px 8px;max-height:28em;overflow:auto}
.pa-side.chosen{background:#f0f7fc;border-left:4px solid #2c7fb8}
.pa-side.rejected{background:#fdf4ee;border-left:4px solid #d95f0e}
.pa-side h4{margin:0 0 4px;font-size:12.5px;text-transform:uppercase;letter-spacing:.05em;color:#555}
.pa-root mark.del{background:#fda29b;color:inherit}
.pa-root mark.ins{background:#a6f4c5;color:inherit}
.pa-muted{color:#666}
.pa-root details>summary{cursor:pointer;font-weight:600}
.pa-trainer{margin-top:6px;border-top:1px dashed #d8d8de;padding-top:4px}
.pa-trainer>summary{font-weight:400;color:#444}
.pa-root mark.cut{background:#e3e3e8;color:#555;font-style:italic}
#pa-controls{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:.4em 0}
#pa-controls[hidden]{display:none}
#pa-q{min-width:260px}
#pa-rows td{font-size:13px}
.pa-snip{color:#555;font-size:12px;margin-top:2px;word-break:break-word}
"""

PAIR = r"""
{% macro pair_block(p, member=False) -%}
<div class="pa-pair{% if member %} member{% endif %}" id="row-{{ p.row }}">
  <div class="pa-pair-head">
    <span class="row">row {{ p.row }}</span>
    {% if p.role %}<span class="pa-muted">{{ p.role }}</span>{% endif %}
    {% for f in p.findings %}<span class="pa-tag {{ f.action }}" title="{{ f.detail }}">{{ f.check }}{% if f.field %}:{{ f.field }}{% endif %}{% if f.score is not none %} {{ '%.3g' % f.score }}{% endif %} · {{ f.action }}</span>{% endfor %}
    {% if p.similarity is not none %}<span class="pa-muted">word similarity {{ '%.2f' % p.similarity }}</span>{% endif %}
    {% for k, v in p.metrics %}<span class="pa-muted">{{ k }} {{ v }}</span>{% endfor %}
  </div>
  {% for f in p.findings if f.detail %}<div class="pa-muted">{{ f.check }}: {{ f.detail }}</div>{% endfor %}
  {% if p.trainer and p.trainer.get('split') %}<div class="pa-muted">split: {{ p.trainer.split }}</div>{% endif %}
  {% if p.missing %}
  <div class="pa-muted">{{ p.missing }}</div>
  {% else %}
  {% if p.prompt %}<div class="pa-prompt"><pre>{{ p.prompt }}</pre></div>{% endif %}
  <div class="pa-sides">
    <div class="pa-side chosen"><h4>chosen{% if p.chosen_len is not none %} · {{ p.chosen_len }} chars{% endif %}</h4><pre>{{ p.chosen_html }}</pre></div>
    <div class="pa-side rejected"><h4>rejected{% if p.rejected_len is not none %} · {{ p.rejected_len }} chars{% endif %}</h4><pre>{{ p.rejected_html }}</pre></div>
  </div>
  {% endif %}
  {% if p.trainer %}{{ trainer_block(p.trainer) }}{% endif %}
</div>
{%- endmacro %}

{% macro cut_text(part) -%}
{% if part.before %}<mark class="cut">[… {{ part.before }} tokens cut …]</mark>
{% endif %}{{ part.text }}{% if part.after %}
<mark class="cut">[… {{ part.after }} tokens cut …]</mark>{% endif %}
{%- endmacro %}

{% macro trainer_block(t) -%}
<details class="pa-trainer"><summary>as the trainer sees it: {% if t.error %}not available ({{ t.error }}){% else %}{{ t.summary }}{% endif %}</summary>
{% if not t.error %}
<div class="pa-muted">decoded token ids the loss sees (chat template, special tokens and the appended EOS included)</div>
{% if t.get('split') %}<div class="pa-muted">{{ t.split }}</div>{% endif %}
<div class="pa-prompt"><pre>{{ cut_text(t.prompt) }}</pre></div>
{% if t.prompt_rejected %}<div class="pa-muted">prompt as kept with the rejected response:</div><div class="pa-prompt"><pre>{{ cut_text(t.prompt_rejected) }}</pre></div>{% endif %}
<div class="pa-sides">
  <div class="pa-side chosen"><h4>chosen · {{ t.sides.chosen.kept }} of {{ t.sides.chosen.total }} tokens</h4><pre>{{ cut_text(t.sides.chosen) }}</pre></div>
  <div class="pa-side rejected"><h4>rejected · {{ t.sides.rejected.kept }} of {{ t.sides.rejected.total }} tokens</h4><pre>{{ cut_text(t.sides.rejected) }}</pre></div>
</div>
{% endif %}
</details>
{%- endmacro %}
"""

REPORT = r"""{% from "pair.html" import pair_block %}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="pairaudit {{ version }}">
<link rel="icon" href="data:,">
<title>pairaudit report: {{ source_name }}</title>
<style>{{ css }}
body{margin:0;background:#f7f7f9}.pa-root{max-width:1280px;margin:0 auto;padding:18px 26px;background:#fff}
nav{display:flex;flex-wrap:wrap;gap:4px 12px;margin:.5em 0}nav a{white-space:nowrap}
.pa-digest{background:#fff8e1;border:1px solid #f0d58c;border-radius:8px;padding:4px 16px 10px;margin:.6em 0}
.pa-digest h2{margin-top:.4em}.pa-digest-list{margin:.4em 0;padding-left:1.2em}.pa-digest-list li{margin:.25em 0}
</style>
</head>
<body>
<div class="pa-root">
<h1>pairaudit report</h1>
<div class="pa-muted">source <code>{{ source.path }}</code> · kind {{ source.kind or "?" }} · format <b>{{ source.format or "?" }}</b> · pairaudit {{ version }}</div>
<nav><a href="#summary">what to act on</a><a href="#rows">rows with findings</a><a href="#checks">checks</a><a href="#profile">dataset profile</a>{% for c in checks if c.rows or c.status != "ran" %}<a href="#check-{{ c.name }}">{{ c.name }}</a>{% endfor %}</nav>

<section id="digest" class="pa-digest">
<h2 id="summary">What to act on</h2>
<div class="pa-cards">
  <div class="pa-card"><span>input</span><b>{{ totals.input }}</b></div>
  <div class="pa-card keep"><span>kept</span><b>{{ totals.kept }}</b></div>
  <div class="pa-card drop"><span>dropped</span><b>{{ totals.dropped }}</b></div>
  <div class="pa-card flag"><span>flagged (kept)</span><b>{{ totals.flagged }}</b></div>
</div>
<ul class="pa-digest-list">
{% if digest.dropped %}<li id="digest-dropped"><b>Dropped, and why</b>: {% for c in digest.dropped %}<a href="#rows={{ c.name }}">{{ c.name }}</a> <b>{{ c.rows }}</b>{{ "," if not loop.last }} {% endfor %}rows (a row can have several reasons)</li>{% endif %}
{% if review_line %}<li id="digest-review"><b>Review decisions</b>: {{ review_line.split(": ", 1)[-1] }} (<a href="#decisions">details</a>)</li>{% endif %}
{% if digest.flagged %}<li id="digest-flagged"><b>Worth reading</b> ({{ totals.flagged }} flagged rows, kept), in review order: {% for c in digest.flagged %}<a href="#rows={{ c.name }}">{{ c.name }}</a> <b>{{ c.kept }}</b>{{ "," if not loop.last }} {% endfor %}</li>{% endif %}
{% for name, r in remedies %}<li class="pa-remedy"><b>The trainer: {{ name }}</b> {{ r.rows }} rows; {{ r.text }}</li>{% endfor %}
{% if flip_lines %}<li id="digest-labels"><b>Label evidence</b>: {{ flip_lines[0].split(": ", 1)[-1] }} (<a href="#label-evidence">details</a>)</li>{% endif %}
{% if not_run %}<li class="pa-status-failed"><b>{{ not_run|length }} check{{ "s" if not_run|length != 1 }} did not run</b>: {% for c in not_run %}{{ c.name }} ({{ c.status }}){{ ", " if not loop.last }}{% endfor %}</li>{% endif %}
{% if digest.none %}<li id="digest-none" class="pa-muted">{{ digest.none|length }} check{{ "s" if digest.none|length != 1 }} found no rows: {{ digest.none|join(", ") }}</li>{% endif %}
</ul>
</section>

<h2 id="rows">Rows with findings ({{ table.total }})</h2>
<p class="pa-muted">{{ totals.dropped }} rows dropped and {{ totals.flagged }} flagged and kept, as the terminal counts them; the table lists every row with a finding, most severe first (rows a check drops, then by check, then score). Search looks at row numbers, check names, details{% if table.snippet %} and up to {{ table.snippet }} characters of each pair's text (shortened to keep the page small){% endif %}; the whole pair: the examples below (linked rows), <code>pairaudit show OUT ROW</code> or <code>Review(OUT).pair(ROW)</code>. The same list is in findings.parquet.{% if table.listed < table.total %} Only the {{ table.listed }} most severe of the {{ table.total }} rows are listed here, to keep the page small; findings.parquet has them all.{% endif %}</p>
<div id="pa-controls" hidden>
<input id="pa-q" type="search" placeholder="search rows, checks, details, text" aria-label="search">
<select id="pa-f-check" aria-label="check"><option value="-1">every check</option></select>
<select id="pa-f-action" aria-label="action"><option value="-1">drop and flag</option></select>
<select id="pa-sort" aria-label="sort"><option value="severity">most severe first</option><option value="score">score, highest first</option><option value="row">row number</option></select>
<button id="pa-prev" type="button">previous</button><span id="pa-page"></span><button id="pa-next" type="button">next</button>
</div>
<div id="pa-count" class="pa-muted">{% if table.total %}the {{ table.first|length }} most severe of {{ table.total }} rows{% else %}no flagged rows{% endif %}</div>
<table id="pa-rows"><thead><tr><th>row</th><th>action</th><th>checks</th><th>score</th><th>detail</th></tr></thead>
<tbody id="pa-rows-body">{% for it in table.first %}<tr data-row="{{ it.row }}"><td class="num">{{ it.row }}</td><td class="pa-act-{{ it.action }}">{{ it.action }}</td><td>{% for c in it.checks %}<span class="pa-tag">{{ c }}</span> {% endfor %}</td><td class="num">{% if it.score is not none %}{{ '%.3g' % it.score }}{% endif %}</td><td>{{ it.detail }}{% if it.text %}<div class="pa-snip">{{ it.text }}</div>{% endif %}</td></tr>
{% endfor %}</tbody></table>
<script type="application/json" id="pa-data">{{ table.json }}</script>
<script>{{ table.script }}</script>

<h2 id="checks">Checks</h2>
{% if assumptions %}
<table id="assumptions"><caption style="text-align:left;font-weight:600">Assumptions (every token count and limit depends on these)</caption>
{% for k, v in assumptions %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>{% endfor %}</table>
{% endif %}
{% if flip_lines %}
<div id="label-evidence" class="pa-note"><b>Label evidence (likely_flipped)</b>
<ul>{% for line in flip_lines %}<li>{{ line }}</li>{% endfor %}</ul></div>
{% endif %}
{% if not_run or problems %}
<div class="pa-alert">{% if not_run %}<b>{{ not_run|length }} check{{ "s" if not_run|length != 1 }} did not run</b> — the cleaned output was not checked for these:
<ul>{% for c in not_run %}<li><b>{{ c.name }}</b> ({{ c.status }}){% if c.reason %}: {{ c.reason }}{% endif %}</li>{% endfor %}</ul>{% endif %}
{% if problems %}<b>problems</b><ul>{% for p in problems %}<li>{{ p }}</li>{% endfor %}</ul>{% endif %}</div>
{% endif %}
<table>
<tr><th>check</th><th>status</th><th>action</th><th>findings</th><th>rows</th><th>description</th></tr>
{% for c in checks if c.rows or c.status != "ran" %}
<tr><td><a href="#check-{{ c.name }}">{{ c.name }}</a></td><td class="pa-status-{{ c.status }}">{{ c.status }}{% if c.reason %} — {{ c.reason }}{% endif %}</td>
<td class="pa-act-{{ c.action }}">{{ c.action }}</td><td class="num">{{ c.findings }}</td><td class="num">{{ c.rows }}</td><td>{{ c.description }}</td></tr>
{% endfor %}
</table>
{% if digest.none %}<p class="pa-muted">{{ digest.none|length }} check{{ "s" if digest.none|length != 1 }} ran and found no rows: {{ digest.none|join(", ") }}.</p>{% endif %}
{% if off %}<p class="pa-muted">Not enabled in this scan: {{ off|join(", ") }}.</p>{% endif %}
{% if decision_summary %}<span id="decisions"></span>
<h3>Review decisions applied</h3>
<p>{{ decision_summary.applied }} of {{ decision_summary.total }} decisions applied{% if decision_summary.flipped %}; flipped rows: {{ decision_summary.flipped }}{% endif %}.</p>
{% if decision_summary.ignored %}<div class="pa-alert"><b>{{ decision_summary.ignored|length }} decision{{ "s" if decision_summary.ignored|length != 1 }} ignored</b><ul>
{% for i in decision_summary.ignored %}<li>row {{ i.row }} ({{ i.decision }}): {{ i.reason }}</li>{% endfor %}</ul></div>{% endif %}
{% endif %}
{% if decisions %}
<h3>Recorded decisions ({{ decisions|length }})</h3>
<table><tr><th>row</th><th>decision</th><th>note</th></tr>
{% for d in decisions %}<tr><td class="num"><a href="#row-{{ d.row }}">{{ d.row }}</a></td><td>{{ d.decision }}</td><td>{{ d.note }}</td></tr>{% endfor %}
</table>
{% endif %}
{% if trainer_note %}<p class="pa-muted">{{ trainer_note }}</p>{% endif %}
<details id="models-config"><summary>Models and configuration</summary>{% if models %}<h3>Models</h3><pre>{{ models }}</pre>{% endif %}<h3>Configuration</h3><pre>{{ config }}</pre></details>

<h2 id="profile">Dataset profile</h2>
{% if profile %}<table>{% for k, v in profile %}<tr><th>{{ k }}</th><td>{{ v }}</td></tr>{% endfor %}</table>{% endif %}
{% if plots %}
<div class="pa-plots">{% for p in plots %}
<figure class="pa-plot" id="plot-{{ p.id }}"><img alt="{{ p.title }}" src="{{ p.uri }}"><p>{{ p.caption }}</p></figure>{% endfor %}
</div>
{% elif plots is none %}<p class="pa-muted">Plots need matplotlib: pip install 'pairaudit[report]'.</p>
{% else %}<p class="pa-muted">scores.parquet holds no per-row metrics to plot.</p>{% endif %}

{% for c in checks if c.rows or c.status != "ran" %}
<h2 id="check-{{ c.name }}">{{ c.name }}</h2>
<p>{{ c.description }}</p>
<p>status <b class="pa-status-{{ c.status }}">{{ c.status }}</b>{% if c.reason %} ({{ c.reason }}){% endif %} · action <b class="pa-act-{{ c.action }}">{{ c.action }}</b>
· {{ c.findings }} finding{{ "s" if c.findings != 1 }} on {{ c.rows }} row{{ "s" if c.rows != 1 }}
{% if c.thresholds %} · thresholds <code>{{ c.thresholds }}</code>{% endif %}</p>
{% if c.examples %}
<h3>Top examples{% if c.grouped %} (groups: representative row first){% endif %}</h3>
{% for ex in c.examples %}
{% if ex.members is defined %}
{{ pair_block(ex.head) }}{% for m in ex.members %}{{ pair_block(m, member=True) }}{% endfor %}
{% if ex.more %}<div class="pa-muted" style="margin-left:28px">… and {{ ex.more }} more rows in this group</div>{% endif %}
{% else %}{{ pair_block(ex) }}{% endif %}
{% endfor %}
{% elif c.status == "ran" %}<p class="pa-muted">No findings.</p>{% endif %}
<p><a href="#rows={{ c.name }}">all {{ c.rows }} row{{ "s" if c.rows != 1 }} of {{ c.name }} in the table of flagged rows</a></p>
{% endfor %}
</div>
</body>
</html>
"""

REVIEW_PAIR = r"""{% from "pair.html" import pair_block %}<div class="pa-root"><style>{{ css }}</style>
{{ pair_block(p) }}
{% if decision %}<div class="pa-muted">recorded decision: <b>{{ decision.decision }}</b>{% if decision.note %} ({{ decision.note }}){% endif %}</div>{% endif %}
</div>"""


def environment():  # jinja2.Environment, imported lazily
    """A jinja2 environment with autoescape on and the templates above."""
    from pairaudit.errors import require

    jinja2 = require("jinja2", "report", "the HTML report")
    env = jinja2.Environment(
        loader=jinja2.DictLoader({"report.html": REPORT, "pair.html": PAIR, "review_pair.html": REVIEW_PAIR}),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=False,
        lstrip_blocks=False,
    )
    return env
