"""The report as a person sees it: `make report` on the smoke run (configs/smoke.yaml), opened in headless
Chromium 1,400 px wide, every link on its landing page clicked, each table and figure opened; screenshots of the
landing page, a table and a figure under tests/artifacts/report/ for a reviewer."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

pytestmark = pytest.mark.e2e


def _chromium():
    """A headless Chromium: the installed one, else Debian's `chromium` installed with apt (root only)."""
    import os
    import shutil

    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        pytest.skip("no Chromium here and no apt-get (as root) to install it")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"]
    if subprocess.run(install, capture_output=True, env=env).returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, env=env, check=True)
        subprocess.run(install, capture_output=True, env=env, check=True)
    return shutil.which("chromium")


def _headless(chromium, *args, cwd=None, budget_ms=60000):
    """One headless Chromium call in a process group of its own; whatever it started (crash handler, zygotes) is
    killed with the group when it returns, so no browser process outlives the test. ``budget_ms``: the page's
    virtual time (its timers run ahead of the clock), long enough for the probe to open every entry."""
    import os
    import signal

    cmd = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--disable-dev-shm-usage",
           "--enable-logging=stderr", "--v=0", f"--virtual-time-budget={budget_ms}", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


# Run in the report page after it loads: wait for its script to draw the landing page, note its text and the
# panel's width, click each link on it and note what the menu then shows and how wide the panel is, open each
# figure and each table with its entry's view button and note where it shows (a table's page decoded from its data
# URI, its cells), then write the notes into the page (<pre id="wobble-probe">) for --dump-dom. With a hash
# (#landing, #open:<path>) it only opens that one entry's view and stops, for a screenshot.
PROBE = """
<script>
(async () => {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  const landing = () => document.querySelector('#wobble-landing');
  for (let i = 0; i < 200 && !landing(); i++) await sleep(20);
  const box = el => { if (!el) return null; const r = el.getBoundingClientRect();
                      return {left: r.left, top: r.top, width: r.width, height: r.height}; };
  const nav = () => document.querySelector('nav');
  const linkTo = path => [...landing().querySelectorAll('a[href^="javascript:app.showResultInfo"]')]
    .find(a => decodeURIComponent(a.getAttribute('href')) === `javascript:app.showResultInfo('${path}')`);
  async function view(path) {  // the landing back, the entry's link, then its eye button
    app.setView({content: 'rulegraph'});
    await sleep(50);
    linkTo(path).click();
    await sleep(50);
    const span = [...document.querySelectorAll('nav li span')].find(s => s.textContent === path);
    if (span && span.parentElement.querySelector('a')) span.parentElement.querySelector('a').click();
    await sleep(150);
  }
  const hash = decodeURIComponent(location.hash.slice(1));
  if (hash === 'landing') return;
  if (hash.startsWith('open:')) { await view(hash.slice(5)); return; }
  const out = {landing: !!landing(), top: null, text: '', links: [], figures: [], tables: [], window: innerWidth};
  if (landing()) {
    out.top = document.querySelector('div.prose').getBoundingClientRect().top;
    out.text = landing().innerText;
    const hrefs = [...landing().querySelectorAll('a[href^="javascript:"]')].map(a => a.getAttribute('href'));
    for (const href of hrefs) {
      landing().querySelector(`a[href="${CSS.escape(href)}"]`).click();
      await sleep(50);
      out.links.push({href, nav: nav().innerText, panel: box(nav())});
    }
    const paths = hrefs.filter(h => h.startsWith('javascript:app.showResultInfo'))
                       .map(h => decodeURIComponent(h.match(/'(.*)'/)[1]));
    for (const path of paths.filter(p => p.endsWith('.png'))) {
      await view(path);
      const img = document.querySelector('img[src^="data:image/png"]');
      out.figures.push({path, width: img ? img.naturalWidth : 0, shown: box(img), panel: box(nav())});
    }
    for (const path of [...new Set(paths.filter(p => p.endsWith('.html')))]) {
      await view(path);
      const frame = document.querySelector('iframe[src^="data:text/html"]');
      let cells = [];
      if (frame) {
        const b64 = frame.getAttribute('src').split(',')[1];
        const text = new TextDecoder().decode(Uint8Array.from(atob(b64), c => c.charCodeAt(0)));
        cells = [...new DOMParser().parseFromString(text, 'text/html').querySelectorAll('td')].map(td => td.textContent);
      }
      out.tables.push({path, cells, shown: box(frame), panel: box(nav())});
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'wobble-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>
"""

#: Where the report's screenshots go for a reviewer (git-ignored): the landing page, a table, a figure.
SHOTS = REPO / "tests/artifacts/report"
WINDOW = (1400, 900)


def _md_cells(md: Path) -> list[str]:
    """The body cells of a .md's pipe tables (header rows left out), as its view's <td> cells hold them."""
    import re

    cells, row = [], []
    for line in md.read_text(encoding="utf-8").splitlines():
        if re.fullmatch(r"\|[-:| ]+\|", line):
            cells = cells[:len(cells) - len(row)]  # the row above was the header
        elif line.startswith("|"):
            row = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            cells += row
    return cells


def _ink(png: Path, box: dict) -> tuple[float, int]:
    """In the screenshot ``png``, within ``box`` (CSS px; the screenshot is 1:1): the share of dark pixels (text,
    lines) and the number of distinct colours (a figure's)."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    crop = img.crop((int(box["left"]), int(box["top"]), int(box["left"] + box["width"]),
                     int(min(box["top"] + box["height"], img.height))))
    grey = crop.convert("L")
    dark = sum(1 for v in grey.getdata() if v < 110)
    return dark / max(1, grey.width * grey.height), len(set(crop.getdata()))


def test_report_landing_page_is_the_claims_ledger_with_every_study_a_click_away(smoke_run):
    """`make report` (`wobble report`: the views a run lacks, then `snakemake --report` with the report's
    stylesheet), the page itself opened in headless Chromium 1,400 px wide: once its script has run, the page it
    opens on holds the merged ledger's short table (each study's rows, the verdict counts) and each study's summary
    (its own counts), its top in view; clicking the links on it opens every table, figure and claims ledger of
    every study, each scorecard, and each study's category, the info panel at least 350 px wide each time; each
    figure shows as an image and each table as a page whose cells are the .md's, inside the window; screenshots
    of the landing, a table and a figure show text in the table and an image in the figure; no console errors
    and no per-file metadata warnings."""
    import html
    import re
    import shutil
    import sys
    from urllib.parse import quote, unquote

    import pandas as pd

    chromium = _chromium()
    proc = subprocess.run([sys.executable, "-m", "wobble.cli", "report", "--configfile", "run.yaml", "--output",
                           "report.html"], cwd=smoke_run, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Missing metadata" not in proc.stderr and "no Snakemake record" not in proc.stderr, proc.stderr[-3000:]
    report = (smoke_run / "report.html").read_text(encoding="utf-8")
    probed = smoke_run / "report_probed.html"
    head, body_end, tail = report.rpartition("</body>")  # the page's own (a script's text holds another)
    probed.write_text(head + PROBE + body_end + tail, encoding="utf-8")
    size = f"--window-size={WINDOW[0]},{WINDOW[1]}"
    page = _headless(chromium, size, "--dump-dom", probed.as_uri())
    assert page.returncode == 0 and "<body" in page.stdout, page.stderr[-2000:]
    errors = [ln for ln in page.stderr.splitlines() if "CONSOLE" in ln and ("Uncaught" in ln or ":ERROR:" in ln)]
    assert errors == [], errors
    dom = page.stdout
    probe = json.loads(html.unescape(re.search(r'<pre id="wobble-probe">(.*?)</pre>', dom, re.S).group(1)))
    assert probe["landing"] and probe["top"] is not None and probe["top"] >= 0, probe["top"]
    assert probe["window"] == WINDOW[0]

    # the merged ledger's short table and the study summaries, as the page shows them
    def flat(text):
        return " ".join(text.split())

    shown = flat(probe["text"])
    studies = sorted(p.parent.name for p in smoke_run.glob("results/*/findings.md"))
    assert studies == ["first_token", "followup", "icl_bias", "instructions"]
    ledger = (smoke_run / "results/findings.md").read_text(encoding="utf-8").splitlines()
    counts = [ln[2:] for ln in ledger if re.match(r"\* \d+ rows: ", ln) or ln.startswith("* Per study: ")]
    assert len(counts) == 2 and [c for c in counts if flat(c) not in shown] == []
    for study in studies:
        own = (smoke_run / f"results/{study}/findings.md").read_text(encoding="utf-8").splitlines()
        assert flat(next(ln[2:] for ln in own if re.match(r"\* \d+ rows: ", ln))) in shown, study
        row_id = pd.read_csv(smoke_run / f"results/{study}/findings.csv")["row_id"].iloc[0]
        assert row_id in shown, (study, row_id)
    quote_ = pd.read_csv(smoke_run / "results/findings.csv")["quote"].iloc[0]
    assert flat(quote_) not in shown  # a claim's section stays in the ledger's own page

    # every table, ledger and scorecard (as its view), every figure and each study: a link that opens its entry,
    # the info panel beside the page at a readable width
    opened = {}
    for link in probe["links"]:
        kind, arg = re.fullmatch(r"javascript:app\.(\w+)\('(.*)'\)", link["href"]).groups()
        opened[(kind, unquote(arg))] = link["nav"].lower()
        assert link["panel"]["width"] >= 350, link
    views = [f"results/{s}/findings.html" for s in studies] + ["results/findings.html"]
    for pattern in ("results/*/tables/*.md", "results/scorecard/*.md"):
        views += [p.with_suffix(".html").relative_to(smoke_run).as_posix() for p in smoke_run.glob(pattern)]
    figures = sorted(p.relative_to(smoke_run).as_posix() for p in smoke_run.glob("results/*/figures/*.png"))
    unreached = [f for f in views + figures if f.lower() not in opened.get(("showResultInfo", f), "")]
    assert unreached == [], unreached
    for study in studies:
        nav = opened.get(("showCategory", study), "")
        assert "tables" in nav and "figures" in nav and "claims ledger" in nav, (study, nav)

    # each figure an image, each table a page of the .md's cells, inside the window beside a readable panel
    def inside(box):
        return box and box["left"] >= 0 and box["left"] + box["width"] <= WINDOW[0] + 1 and box["top"] < WINDOW[1]

    assert sorted(f["path"] for f in probe["figures"]) == figures
    for f in probe["figures"]:
        assert f["width"] >= 100 and inside(f["shown"]) and f["shown"]["width"] >= min(f["width"], 900) - 1, f
        assert f["panel"]["width"] >= 350, f
    assert sorted(t["path"] for t in probe["tables"]) == sorted(views)
    for t in probe["tables"]:
        assert inside(t["shown"]) and t["shown"]["width"] >= 700 and t["shown"]["height"] >= 500, t
        assert t["panel"]["width"] >= 350, t
        cells = _md_cells(smoke_run / Path(t["path"]).with_suffix(".md"))
        plain = [flat(c) for c in cells if not re.search(r"[*`_<>&\[\]\\]", c)]  # no Markdown marks to render
        assert len(t["cells"]) == len(cells), (t["path"], len(t["cells"]), len(cells))  # a smoke table may be empty
        assert set(plain) <= {flat(c) for c in t["cells"]}, t["path"]
    assert all(t["cells"] for t in probe["tables"] if t["path"].endswith(("/table4.html", "/findings.html")))

    # what a person sees: the landing, a table and a figure, screenshots kept for a reviewer
    shutil.rmtree(SHOTS, ignore_errors=True)
    SHOTS.mkdir(parents=True)
    table = "results/instructions/tables/table4.html"
    figure = "results/instructions/figures/figure_drop.png"
    shots = {"landing": "landing", "table": f"open:{table}", "figure": f"open:{figure}"}
    for name, hash_ in shots.items():
        out = smoke_run / f"report-{name}.png"
        shot = _headless(chromium, size, f"--screenshot={out}", f"{probed.as_uri()}#{quote(hash_)}")
        assert shot.returncode == 0 and out.is_file(), shot.stderr[-2000:]
        shutil.copy2(out, SHOTS / out.name)
    print(f"report screenshots: {SHOTS}/report-{{landing,table,figure}}.png")
    table_box = next(t["shown"] for t in probe["tables"] if t["path"] == table)
    figure_box = next(f["shown"] for f in probe["figures"] if f["path"] == figure)
    dark, _ = _ink(SHOTS / "report-table.png", table_box)
    assert dark > 0.01, dark  # the table's text and rules, not a blank frame
    _, colours = _ink(SHOTS / "report-figure.png", figure_box)
    assert colours > 200, colours  # the heatmaps' colours, not a blank
    landing_dark, _ = _ink(SHOTS / "report-landing.png", {"left": 500, "top": 0, "width": 800, "height": 800})
    assert landing_dark > 0.005, landing_dark
