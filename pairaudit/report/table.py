"""report.html's table of every flagged row: an embedded compact JSON table, paged, searched, filtered by
check and action and sorted by score in the browser by one small inline script (no library, no network;
the page's Content-Security-Policy allows only this script, by its hash).

Per row the table holds its findings (check, action, score), one short detail and as much of the pair's
text as the size budget allows: ``TEXT_BUDGET`` characters over all rows for detail and text together
(a detail gets up to ``DETAIL_MAX``, the text what is left, at most ``SNIPPET_MAX``), so that 10,000
flagged rows stay under 1 MB (``scripts/report_size.py`` measures it). The first page is also rendered as HTML, so a viewer
without scripts still sees the most severe rows.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from typing import TYPE_CHECKING, Any

import numpy as np

from pairaudit.output_files import FINDINGS

if TYPE_CHECKING:
    from pairaudit.outputs.reader import OutputFolder

PAGE_SIZE = 50
TABLE_ROWS = 20_000  # rows listed at most (the most severe); every finding stays in findings.parquet
DETAIL_MAX = 90  # characters of a row's detail
DETAIL_MIN = 16  # a detail keeps at least this many characters, whatever the budget
TEXT_BUDGET = 200_000  # characters of detail + pair text over all rows
SNIPPET_MAX = 360  # characters of pair text per row
SNIPPET_MIN = 24  # below this per row, no text at all
ACTIONS = ("drop", "flag")
BATCH_ROWS = 65_536  # findings read at a time


def table_data(folder: OutputFolder, limit: int | None = None) -> dict[str, Any]:
    """The compact table: ``checks`` (names, scan order), ``details`` (interned texts), ``rows``:
    ``[row, [check index, action index, score, ...], detail index, text]`` in severity order (rows a check
    drops first, then by check order, score descending, row). findings.parquet is read twice in batches: the
    ``limit`` (``TABLE_ROWS``) most severe rows are chosen on numeric columns (``_most_severe``), then only
    their findings are read: memory and page size stay bounded however many rows are flagged (``all``: how
    many are, when more than ``limit``)."""
    limit = TABLE_ROWS if limit is None else limit
    path = folder.path / FINDINGS
    found = _checks_found(path)
    checks = [c for c in folder.checks if c in found]
    checks += sorted(found - set(checks))
    cidx = {c: i for i, c in enumerate(checks)}
    chosen, n_rows = _most_severe(path, checks, limit)
    kept: list[tuple[Any, ...]] = []  # (negated severity key, entry), in row order
    for row, items in _items_of(path, chosen):
        items.sort(key=lambda t: (t[1] != "drop", cidx[t[0]], -(t[2] if t[2] is not None else float("-inf"))))
        fs: list[Any] = []
        for check, action, score, _ in items:
            fs.extend([cidx[check], 0 if action == "drop" else 1, None if score is None else float(f"{score:.3g}")])
        key = (fs[1], fs[0], -(fs[2] if fs[2] is not None else -1e300), row)
        kept.append((tuple(-x for x in key), [row, fs, items[0][3] or "", ""]))
    kept.sort(key=lambda e: e[1][0])  # row order: details are interned in it
    if not kept:
        return {"checks": checks, "actions": list(ACTIONS), "details": [], "rows": [], "snippet": 0}
    per_row = TEXT_BUDGET // len(kept)
    detail_max = max(DETAIL_MIN, min(DETAIL_MAX, per_row))
    details: dict[str, int] = {}
    for _, entry in kept:
        entry[2] = details.setdefault(_short(entry[2], detail_max), len(details))
    order = [e for _, e in sorted(kept, key=lambda e: tuple(-x for x in e[0]))]
    texts = list(details)
    room = {e[0]: min(SNIPPET_MAX, per_row - len(texts[e[2]])) for e in order}
    wanted = [e[0] for e in order if room[e[0]] >= SNIPPET_MIN]
    pairs = folder.pairs(wanted) if wanted else {}
    for e in order:
        if room[e[0]] >= SNIPPET_MIN:
            e[3] = _snippet(pairs.get(e[0]), room[e[0]])
    out = {"checks": checks, "actions": list(ACTIONS), "details": texts, "rows": order,
           "snippet": max((room[r] for r in wanted), default=0)}
    if n_rows > len(order):
        out["all"] = n_rows
    return out


def _checks_found(path: Any) -> set[str]:
    if not path.exists():
        return set()
    import polars as pl

    return set(pl.scan_parquet(path, glob=False).select(pl.col("check").unique()).collect()["check"].drop_nulls().to_list())


def _row_keys(row: np.ndarray, aidx: np.ndarray, cidx: np.ndarray, score: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per flagged row (ascending) of these findings, its severity key as ``table_data`` orders rows: the
    action and check of its first finding (drop first, then check order, then score descending; null scores
    last), and that score's 3-significant-digit rounding negated (1e300 when null)."""
    order = np.lexsort((np.where(np.isnan(score), np.inf, -score), cidx, aidx, row))
    row, aidx, cidx, score = row[order], aidx[order], cidx[order], score[order]
    first = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    s = score[first]
    neg = np.array([1e300 if x != x else -float(f"{x:.3g}") for x in s.tolist()], dtype=np.float64)
    return aidx[first], cidx[first], neg, row[first]


def _most_severe(path: Any, checks: list[str], limit: int) -> tuple[np.ndarray, int]:
    """The ``limit`` most severe flagged rows (ascending) and the number of flagged rows, from findings.parquet
    read in batches of its numeric columns: held at once are one batch and ``limit`` keys (no text)."""
    if not path.exists() or limit <= 0:
        return np.zeros(0, np.int64), 0
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    names = pa.array(checks, pa.string())
    # the kept keys: aidx, cidx, negated rounded score, row
    best = [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64), np.zeros(0, np.int64)]
    held = [np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)]
    n_rows = 0
    batches = pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=["row", "check", "action", "score"])
    for rb in itertools.chain(batches, [None]):
        if rb is not None:
            cols = [rb.column(i) for i in range(4)]
            part = [cols[0].to_numpy(zero_copy_only=False).astype(np.int64),
                    pc.fill_null(pc.not_equal(cols[2], "drop"), True).to_numpy(zero_copy_only=False).astype(np.int64),
                    pc.index_in(cols[1], value_set=names).to_numpy(zero_copy_only=False).astype(np.int64),
                    pc.cast(cols[3], pa.float64()).to_numpy(zero_copy_only=False).astype(np.float64)]
            held = [np.concatenate([h, p]) for h, p in zip(held, part)]
            if not len(held[0]):
                continue
            last = held[0] == held[0][-1]  # the last row may go on in the next batch
            now, held = [h[~last] for h in held], [h[last] for h in held]
        else:
            now = held
        if not len(now[0]):
            continue
        keys = _row_keys(*now)
        n_rows += len(keys[3])
        merged = [np.concatenate([b, k]) for b, k in zip(best, keys)]
        top = np.lexsort(merged[::-1])[:limit]
        best = [m[top] for m in merged]
    return np.sort(best[3]), n_rows


def _items_of(path: Any, rows: np.ndarray) -> Any:
    """(row, [(check, action, score, detail), ...]) for these rows (ascending), in file order: only their
    findings are read."""
    if not len(rows):
        return
    import polars as pl

    f = (pl.scan_parquet(path, glob=False).select("row", "check", "action", "score", "detail")
         .filter(pl.col("row").is_in(rows.tolist())).collect())
    for row, group in itertools.groupby(zip(*(f[name].to_list() for name in f.columns)), key=lambda t: t[0]):
        yield row, [t[1:] for t in group]


def _short(text: str, limit: int) -> str:
    """``text`` with whitespace runs squashed, cut to ``limit`` characters; a long text is squashed only as
    far as the cut needs (same result, no copy of a 5 MB answer)."""
    k = 4 * limit + 64
    while k < len(text):
        head = " ".join(text[:k].split())
        if len(head) > limit:
            return head[:limit - 1] + "…"
        k *= 4
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _snippet(pair: Any, budget: int) -> str:
    if pair is None or pair.chosen is None or pair.rejected is None:
        return ""
    third = max(1, (budget - 6) // 3)  # 6: the two separators
    parts = [_short(pair.prompt or "", third), _short(pair.chosen, third), _short(pair.rejected, third)]
    return " ▸ ".join(parts)


def data_json(data: dict[str, Any]) -> str:
    """The table as JSON safe inside ``<script type="application/json">`` (``<`` escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def first_page(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The first page as template rows (what the script renders, for viewers without scripts)."""
    out = []
    for row, fs, d, text in data["rows"][:PAGE_SIZE]:
        items = [(data["checks"][fs[i]], ACTIONS[fs[i + 1]], fs[i + 2]) for i in range(0, len(fs), 3)]
        out.append({"row": row, "action": items[0][1], "detail": data["details"][d], "text": text,
                    "checks": [f"{c}{'' if s is None else f' {s:.3g}'}" for c, _, s in items],
                    "score": max((s for _, _, s in items if s is not None), default=None)})
    return out


def script_hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode() + "'"


SCRIPT = r"""(function(){
"use strict";
var D=JSON.parse(document.getElementById("pa-data").textContent);
var $=function(id){return document.getElementById(id);};
var S={q:"",check:-1,action:-1,sort:"severity",page:0,size:PAGE_SIZE};
var view=[];
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e;}
function hay(r){if(r._h)return r._h;var s=String(r[0]);for(var i=0;i<r[1].length;i+=3)s+=" "+D.checks[r[1][i]];
  r._h=(s+" "+D.details[r[2]]+" "+r[3]).toLowerCase();return r._h;}
function match(r){var f=r[1],best=null,hit=false;for(var i=0;i<f.length;i+=3){
  if((S.check<0||f[i]===S.check)&&(S.action<0||f[i+1]===S.action)){hit=true;
    if(f[i+2]!==null&&(best===null||f[i+2]>best))best=f[i+2];}}
  return hit?{score:best}:null;}
function apply(){var q=S.q.toLowerCase().trim();view=[];
  for(var k=0;k<D.rows.length;k++){var r=D.rows[k],m=match(r);
    if(m&&(!q||hay(r).indexOf(q)>=0))view.push({r:r,s:m.score,k:k});}
  if(S.sort==="score")view.sort(function(a,b){var x=a.s===null?-Infinity:a.s,y=b.s===null?-Infinity:b.s;return y-x||a.r[0]-b.r[0];});
  else if(S.sort==="row")view.sort(function(a,b){return a.r[0]-b.r[0];});
  var pages=Math.max(1,Math.ceil(view.length/S.size));if(S.page>=pages)S.page=pages-1;if(S.page<0)S.page=0;render(pages);}
function render(pages){var body=$("pa-rows-body");while(body.firstChild)body.removeChild(body.firstChild);
  var start=S.page*S.size,end=Math.min(view.length,start+S.size);
  for(var i=start;i<end;i++){var r=view[i].r,f=r[1],tr=el("tr");tr.setAttribute("data-row",r[0]);
    var td=el("td","num"),a;if($("row-"+r[0])){a=el("a",null,String(r[0]));a.href="#row-"+r[0];td.appendChild(a);}else td.textContent=r[0];
    tr.appendChild(td);tr.appendChild(el("td","pa-act-"+D.actions[f[1]],D.actions[f[1]]));
    var c=el("td");for(var j=0;j<f.length;j+=3){c.appendChild(el("span","pa-tag "+D.actions[f[j+1]],
      D.checks[f[j]]+(f[j+2]===null?"":" "+Number(f[j+2]).toPrecision(3))));c.appendChild(document.createTextNode(" "));}
    tr.appendChild(c);tr.appendChild(el("td","num",view[i].s===null?"":Number(view[i].s).toPrecision(3)));
    var d=el("td",null,D.details[r[2]]);if(r[3]){d.appendChild(el("div","pa-snip",r[3]));}tr.appendChild(d);body.appendChild(tr);}
  var all=(D.all||D.rows.length)+" flagged in all"+(D.all?", the "+D.rows.length+" most severe listed":"");
  $("pa-count").textContent=view.length?("rows "+(start+1)+"\u2013"+end+" of "+view.length+" ("+all+")"):("no row matches ("+all+")");
  $("pa-page").textContent="page "+(S.page+1)+" of "+pages;$("pa-prev").disabled=S.page<=0;$("pa-next").disabled=S.page>=pages-1;}
function opts(sel,names){for(var i=0;i<names.length;i++){var o=el("option",null,names[i]);o.value=String(i);sel.appendChild(o);}}
opts($("pa-f-check"),D.checks);opts($("pa-f-action"),D.actions);
$("pa-q").addEventListener("input",function(e){S.q=e.target.value;S.page=0;apply();});
$("pa-f-check").addEventListener("change",function(e){S.check=Number(e.target.value);S.page=0;apply();});
$("pa-f-action").addEventListener("change",function(e){S.action=Number(e.target.value);S.page=0;apply();});
$("pa-sort").addEventListener("change",function(e){S.sort=e.target.value;S.page=0;apply();});
$("pa-prev").addEventListener("click",function(){S.page--;apply();});
$("pa-next").addEventListener("click",function(){S.page++;apply();});
function fromHash(){var m=/^#rows=([A-Za-z0-9_]+)$/.exec(location.hash);if(!m)return;var i=D.checks.indexOf(m[1]);
  if(i<0)return;S.check=i;S.page=0;$("pa-f-check").value=String(i);apply();$("rows").scrollIntoView();}
window.addEventListener("hashchange",fromHash);
$("pa-controls").hidden=false;apply();fromHash();
})();""".replace("PAGE_SIZE", str(PAGE_SIZE))
