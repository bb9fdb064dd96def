"""Reports: untrusted strings are escaped; the HTML renders in a real headless Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.conftest import need

from podium.rating.ranking import load_providers_dir, rank
from podium.rating.rubric import load_rubric
from podium.report.write import write_ranking, write_scorecard

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "providers"
EVIL_HOST = "<script>window.__pwned=1</script>gpu-666"
EVIL_NAME = "Evil | <img src=x onerror=window.__pwned=2> Cloud (fictional)"
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> Path:
    """The examples plus a provider whose name and node host names carry markup."""
    root = tmp_path_factory.mktemp("providers")
    for sub in EXAMPLES.iterdir():
        shutil.copytree(sub, root / sub.name)
    evil = root / "zz-evil"
    shutil.copytree(EXAMPLES / "borealis", evil)
    text = (
        (evil / "provider.yaml").read_text().replace("Borealis GPU Cloud (fictional)", json.dumps(EVIL_NAME))
    )
    (evil / "provider.yaml").write_text(text)
    health = json.loads((evil / "health.json").read_text())
    health["nodes"][0]["host"] = EVIL_HOST
    health["nodes"][0]["verdict"] = "fail"
    (evil / "health.json").write_text(json.dumps(health))
    rubric = load_rubric()
    ranking, cards = rank(load_providers_dir(root), rubric, str(root))
    out = tmp_path_factory.mktemp("report")
    write_ranking(ranking, cards, rubric, out)
    write_scorecard(cards[0], rubric, out / "single")
    return out


def test_untrusted_strings_are_escaped(report_dir):
    html = (report_dir / "index.html").read_text()
    assert "<script" not in html.lower()  # the page itself has no script at all
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;gpu-666" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=window.__pwned=2&gt;" in html
    md = (report_dir / "ranking.md").read_text()
    assert "<script>" not in md and r"\<script\>window.\_\_pwned=1\</script\>gpu-666" in md
    assert r"Evil \| \<img" in md


def test_report_files_and_links(report_dir):
    html = (report_dir / "index.html").read_text()
    ranking = json.loads((report_dir / "ranking.json").read_text())
    assert len(ranking["providers"]) == 7
    for p in ranking["providers"]:
        assert (report_dir / p["scorecard"]).is_file()
    # every item score links to its evidence anchor, and evidence links to its file
    assert html.count('href="#ev-aurora-compute-fictional-') >= 26
    assert 'id="ev-aurora-compute-fictional-security.advisories"' in html
    assert "aurora/audit.json" in html and "<code>/checks/0</code>" in html
    assert "declared, not measured" in html
    assert "Status." not in html  # enum values, not their Python names
    assert (report_dir / "single" / "index.html").is_file() and (
        report_dir / "single" / "scorecard.json"
    ).is_file()


@pytest.mark.chromium
def test_report_renders_in_headless_chromium(report_dir, tmp_path):
    need(CHROMIUM.exists(), "Debian chromium is not installed (/usr/bin/chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (dev extra) is not installed")
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"),  # a fresh --user-data-dir
            executable_path=str(CHROMIUM),
            headless=True,
            chromium_sandbox=False,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
            viewport={"width": 1280, "height": 900},
        )
        page = ctx.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((report_dir / "index.html").as_uri(), wait_until="load")
        plots = page.evaluate(
            """() => [...document.querySelectorAll('svg.plot')].map(s => {
                 const r = s.getBoundingClientRect();
                 return {label: s.getAttribute('aria-label'), w: r.width, h: r.height,
                         bars: s.querySelectorAll('rect.bar, rect.step').length};
               })"""
        )
        pwned = page.evaluate("() => window.__pwned === undefined")
        shot = tmp_path / "ranking.png"
        page.screenshot(path=str(shot), full_page=False)
        ctx.close()
    assert errors == []
    assert pwned is True
    assert all(u.startswith("file://") for u in requests)  # nothing from the network
    assert len(plots) == 1 + 3 * 7  # the podium + three plots per provider
    assert all(pl["w"] > 50 and pl["h"] > 20 for pl in plots)
    podium = plots[0]
    assert podium["label"] == "Podium and tier list" and podium["bars"] == 3
    bars = {pl["label"]: pl["bars"] for pl in plots}
    assert bars["Category scores of Aurora Compute (fictional)"] == 10
    assert bars["Benchmarks of Aurora Compute (fictional) against references"] == 5
    assert bars["Time to fix findings at Aurora Compute (fictional)"] == 1
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (1280, 900)
    shutil.copy(shot, Path(__file__).resolve().parents[2] / ".cache" / "rating-report.png") if (
        Path(__file__).resolve().parents[2] / ".cache"
    ).is_dir() else None
