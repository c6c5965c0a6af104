"""report.html and `pairaudit show`: content, escaping, determinism, and a headless-Chromium check."""

from __future__ import annotations

import http.server
import json
import re
import shutil
import subprocess
import threading
from html.parser import HTMLParser
from pathlib import Path

import polars as pl
import pytest
from rich.console import Console
from support.report_fixtures import TITLE_PAYLOAD, payloads, write_out

from pairaudit.errors import InputError
from pairaudit.report import render_report, show_row
from pairaudit.report.diff import word_diff


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def _parse(html: str) -> _Tags:
    p = _Tags()
    p.feed(html)
    return p


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = write_out(tmp_path_factory.mktemp("rep"))
    path = render_report(out, max_examples=5)
    return out, path.read_text(encoding="utf-8")


def test_report_is_self_contained_and_escaped(rendered: tuple[Path, str]) -> None:
    out, html = rendered
    tags = _parse(html)
    names = [t for t, _ in tags.tags]
    assert "iframe" not in names
    # two scripts, both ours: the table's data (JSON, not run) and the table script the CSP allows by hash
    scripts = [a for t, a in tags.tags if t == "script"]
    assert len(scripts) == 2 and scripts[0] == {"type": "application/json", "id": "pa-data"} and scripts[1] == {}
    from pairaudit.report.table import SCRIPT, script_hash

    assert f"<script>{SCRIPT}</script>" in html
    assert names.count("style") == 1  # ours; the payload's <style> must be text
    for tag, attrs in tags.tags:
        for attr in ("src", "href", "action", "srcset", "poster", "data"):
            value = attrs.get(attr)
            if value is not None:
                assert value.startswith(("data:", "#")), (tag, attr, value[:80])
        assert not any(k.startswith("on") for k in attrs), (tag, attrs)
    csp = [a for t, a in tags.tags if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")
    assert f"script-src {script_hash(SCRIPT)};" in csp[0]["content"] and "unsafe-inline'; base" not in csp[0]["content"]
    for raw in payloads().values():
        assert raw not in html
    assert "&lt;script&gt;document.title=" in html
    unmarked = re.sub(r'</?mark[^>]*>', "", html)  # the word diff splits text with <mark> tags
    assert "&lt;img src=x onerror=&#34;document.title=" in unmarked
    assert "&lt;b&gt;control&lt;/b&gt;" in html  # finding detail escaped too
    assert "&lt;script&gt;alert(&#39;config&#39;)" in html  # config escaped
    assert TITLE_PAYLOAD not in tags.title
    assert not list(out.glob(".report.html.*"))  # temp file renamed away


def test_report_sections(rendered: tuple[Path, str]) -> None:
    out, html = rendered
    for section in ("summary", "profile", "check-identical_pair", "check-duplicate_pair", "check-contradictory_pair",
                    "check-likely_flipped", "check-near_duplicate_pair"):
        assert f'id="{section}"' in html
    # checks that did not run are called out at the top
    alert = html[html.index('class="pa-alert"'): html.index("</div>", html.index('class="pa-alert"'))]
    assert "likely_flipped" in alert and "needs --reference MODEL" in alert
    assert "near_duplicate_pair" in alert and "&lt;b&gt;missing&lt;/b&gt;" in alert
    # plots present as inline SVG data URIs
    assert html.count('src="data:image/svg+xml;base64,') >= 5
    # profile numbers match scores.parquet
    s = pl.read_parquet(out / "scores.parquet").drop_nulls(["chosen_tokens", "rejected_tokens"])
    longer = s.filter(pl.col("chosen_tokens") > pl.col("rejected_tokens")).height
    shorter = s.filter(pl.col("chosen_tokens") < pl.col("rejected_tokens")).height
    assert 0 < longer and 0 < shorter
    assert f"chosen longer in {100 * longer / (longer + shorter):.1f}% of pairs" in html
    assert f"({longer} vs {shorter})" in html
    # likely_flipped did not run: no label evidence is shown, and never a mean score as a flip rate
    assert 'id="label-evidence"' not in html and "mean likely_flipped_score" not in html
    # duplicate group: representative row 0 shown before member row 3 in the duplicate section
    dup = html[html.index('id="check-duplicate_pair"'): html.index('id="check-contradictory_pair"')]
    assert dup.index("row 0</span>") < dup.index("row 3</span>")
    assert "The capital of France is Paris." in re.sub(r"</?mark[^>]*>", "", dup)
    con = html[html.index('id="check-contradictory_pair"'):]
    con = con[: con.index("<h2")]
    assert "row 0</span>" in con and "row 4</span>" in con
    # word diff marks: the near-identical pair differs in its last punctuation
    near = html[html.index('id="check-near_identical_pair"'):]
    near = near[: near.index("<h2")]
    assert '<mark class="del">.</mark>' in near and '<mark class="ins">!</mark>' in near
    # HH implicit pair and the malformed line both render
    assert "line is not JSON" in html and "{not json" in html


def test_report_is_deterministic_and_atomic(tmp_path: Path) -> None:
    out = write_out(tmp_path / "x")
    first = render_report(out).read_bytes()
    second = render_report(out).read_bytes()
    assert first == second
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["clean.jsonl", "dropped.jsonl", "findings.parquet", "report.html", "report.json", "scores.parquet"])


def test_report_without_source_or_scores(tmp_path: Path) -> None:
    # no source file: examples come from clean.jsonl / dropped.jsonl; no scores.parquet: no plots
    out = write_out(tmp_path / "y", with_source=False, with_scores=False)
    html = render_report(out).read_text(encoding="utf-8")
    assert "scores.parquet holds no per-row metrics" in html
    html = re.sub(r"</?mark[^>]*>", "", html)
    assert "One, two, three" in html  # kept row 7, read from clean.jsonl
    assert "Hello there!" in html  # dropped row 1, read from dropped.jsonl
    assert "An apple is a fruit." in html  # HH implicit pair split at the last assistant turn
    # a scores.parquet with only some columns still renders the plots it can
    pl.DataFrame({"row": list(range(8)), "chosen_tokens": [3, 5, 7, 3, 9, None, 4, 3]}).write_parquet(
        out / "scores.parquet")
    html = render_report(out).read_text(encoding="utf-8")
    assert html.count('src="data:image/svg+xml;base64,') == 1


def test_not_an_output_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a pairaudit output folder"):
        render_report(tmp_path)


def test_record_to_pair_formats() -> None:
    from pairaudit.outputs.reader import record_to_pair

    hh = record_to_pair(6, {"chosen": "\n\nHuman: hi\n\nAssistant: yes\n\nHuman: ok?\n\nAssistant: sure",
                            "rejected": "\n\nHuman: hi\n\nAssistant: yes\n\nHuman: ok?\n\nAssistant: no"})
    assert (hh.prompt, hh.chosen, hh.rejected) == (
        "\n\nHuman: hi\n\nAssistant: yes\n\nHuman: ok?\n\nAssistant:", " sure", " no")
    conv = record_to_pair(1, {"chosen": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
                              "rejected": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "b"}]})
    assert (conv.prompt, conv.chosen, conv.rejected) == ("user: q", "assistant: a", "assistant: b")
    bad = record_to_pair(2, {"prompt": "p", "chosen": True, "rejected": "x"})
    assert bad.chosen is None and bad.format == "malformed"


def test_word_diff() -> None:
    left, right, ratio = word_diff("the cat sat on the mat", "the dog sat on the mat")
    assert ("del", "cat") in left and ("ins", "dog") in right
    assert "".join(t for _, t in left) == "the cat sat on the mat"
    assert "".join(t for _, t in right) == "the dog sat on the mat"
    assert 0.8 < ratio < 1.0
    assert word_diff("same", "same")[2] == 1.0


def test_show_row(tmp_path: Path) -> None:
    out = write_out(tmp_path / "s")
    console = Console(width=140, record=True, color_system=None)
    show_row(out, 2, console)
    text = console.export_text()
    assert "encoding_error" in text and "row 2" in text
    assert "[bold red]not rich markup[/bold red]" in text  # dataset text is never parsed as markup
    assert "<script>document.title='PWNED'" in text
    console = Console(width=140, record=True, color_system=None)
    show_row(out, 7, console)
    text = console.export_text()
    # not a terminal (recorded, piped): the changes marked in the text
    assert "near_identical_pair" in text and "One, two, three[-.-]{+!+}" in text and "similarity 0.88" in text
    console = Console(width=140, record=True, color_system=None, force_terminal=True)
    show_row(out, 7, console)
    text = console.export_text()  # a terminal: side by side, the changes in colour
    assert "One, two, three!" in text and "word similarity" in text and "{+" not in text
    with pytest.raises(InputError, match="row 99 is not in the scan"):
        show_row(out, 99, console)


# ------------------------------------------------------------------------------------ browser
_CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
                 "--no-first-run", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                 "--enable-logging=stderr", "--v=0"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("headless Chromium is not installed; run scripts/install_browser.sh (apt-get install chromium "
                "chromium-driver) — CI installs it")


class _Beacon:
    """A local HTTP server that counts every request it gets."""

    def __init__(self) -> None:
        hits: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.hits = hits
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _page_requests(netlog: Path) -> list[str]:
    """URLs requested by the page (browser-internal requests have initiator 'not an origin')."""
    text = netlog.read_text(encoding="utf-8", errors="replace").rstrip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # the log of a killed browser lacks its closing brackets
        data = json.loads(text.rstrip(",") + "]}")
    types = {v: k for k, v in data["constants"]["logEventTypes"].items()}
    urls = []
    for ev in data["events"]:
        p = ev.get("params") or {}
        if types.get(ev["type"]) == "URL_REQUEST_START_JOB" and "url" in p and p.get("initiator") != "not an origin":
            if not str(p["url"]).startswith(("file:", "data:")):
                urls.append(p["url"])
    return urls


def _load(chrome: str, page: Path, work: Path, mode: list[str]) -> tuple[str, str, list[str]]:
    """Open ``page`` once in a fresh profile; returns (stdout, console lines, page network requests)."""
    work.mkdir(parents=True, exist_ok=True)
    netlog = work / "net.json"
    cmd = [chrome, *_CHROME_FLAGS, f"--user-data-dir={work / 'profile'}", f"--log-net-log={netlog}",
           "--net-log-capture-mode=Default", *mode, page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln]
    return proc.stdout, "\n".join(console), _page_requests(netlog)


def test_report_in_headless_chromium(tmp_path: Path) -> None:
    chrome = _chromium()
    beacon = _Beacon()
    try:
        # control: the same payloads unescaped and without CSP must trip every detector below
        control = tmp_path / "control.html"
        control.write_text("<html><head><title>control</title></head><body>"
                           f"{payloads(beacon.url + '/control.png')['rejected']}"
                           "<script>console.error('control-error')</script></body></html>", encoding="utf-8")
        dom, console, requests = _load(chrome, control, tmp_path / "c1", ["--dump-dom"])
        assert f"<title>{TITLE_PAYLOAD}</title>" in dom
        assert "control-error" in console
        assert any("/control.png" in u for u in requests)
        assert any(h.startswith("/control.png") for h in beacon.hits)
        beacon.hits.clear()

        out = write_out(tmp_path / "fixture", beacon=beacon.url + "/beacon.png")
        page = render_report(out)
        dom, console, requests = _load(chrome, page, tmp_path / "r1", ["--dump-dom"])
        title = _parse(dom).title
        assert title == "pairaudit report: source.jsonl"
        assert TITLE_PAYLOAD not in title and "pwned" not in dom.split("<body", 1)[0].lower()
        assert "document.title=" in dom  # the payload is there, as text
        assert console == "", console
        assert requests == [] and beacon.hits == []

        shot = tmp_path / "report.png"
        _, console, requests = _load(chrome, page, tmp_path / "r2",
                                     [f"--screenshot={shot}", "--window-size=1280,2400"])
        assert console == "" and requests == [] and beacon.hits == []
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
        try:
            shutil.copyfile(shot, "/tmp/report_screenshot.png")
        except OSError:
            pass
    finally:
        beacon.close()


def test_dom_keeps_layout(rendered: tuple[Path, str]) -> None:
    # the payload's closing tags (</pre></div>) must not close our elements: every example pair stays intact
    _, html = rendered
    assert len(re.findall(r'<div class="pa-sides">', html)) == len(re.findall(r'<div class="pa-side rejected">', html))


def test_the_report_says_what_the_near_duplicate_transformer_compared() -> None:
    """report.html's near-duplicate rows: the copy threshold with where it was calibrated, and the transformer's
    text count and how many it read cut (helper-65: the page said neither)."""
    from pairaudit.report.html import multipair_rows

    stats = {"near_duplicates": {"mode": "hybrid", "transformer": {"texts": 1021, "texts_cut": 50, "max_tokens": 256},
                                 "calibration": {"min_response": 0.85, "min_response_flag": 0.8,
                                                 "calibrated_on": "within rows", "negatives_within_rows": 40,
                                                 "negatives_across_rows": 0, "space": "static (hybrid: no candidates)",
                                                 "note": "fewer than 50 negatives: the floors decide"}}}
    rows = dict(multipair_rows(stats))
    assert "40 within rows, 0 across rows" in rows["near-duplicate copy threshold"]
    assert rows["near-duplicate copy threshold"].endswith("vectors: static (hybrid: no candidates); fewer than 50 "
                                                          "negatives: the floors decide; no decision read it (no "
                                                          "candidate pair reached the responses)")
    assert rows["near-duplicate transformer"] == ("compared 1,021 texts (the static model decided the rest); 50 longer "
                                                  "than its 256 tokens, read from their start")
    assert "near-duplicate transformer" not in dict(multipair_rows({"near_duplicates": {"mode": "static"}}))
