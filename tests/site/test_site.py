"""kubewhy's reference site in a real browser (headless Chromium driven by chromedriver).

Starts `kubewhy serve` on a free loopback port and walks the site like a reader: the home page,
a search for "insufficient cpu", the top result, a relation link, a diagnosis on /diagnose and a
failure mode's SVG causal chain; screenshots go to target/site-screenshots/. Then it exports the
site (`kubewhy site export DIR`), serves DIR with `python3 -m http.server` and runs the same
search there. Headings, labels and titles are checked on every page visited.

The binary is target/debug/kubewhy unless KUBEWHY_BIN names another; Chromium and chromedriver
are /usr/bin/chromium and /usr/bin/chromedriver unless CHROMIUM / CHROMEDRIVER say otherwise.
"""

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
BIN = os.environ.get("KUBEWHY_BIN", str(ROOT / "target" / "debug" / "kubewhy"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
SHOTS = ROOT / "target" / "site-screenshots"
QUERY = "insufficient cpu"
EXPECTED_HIT = "failure-mode/insufficient-resources"
SYMPTOM = "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str) -> None:
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited: {proc.stderr.read().decode(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on {port}")


@contextlib.contextmanager
def process(args, port, what, cwd=None):
    p = subprocess.Popen(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port, p, what)
        yield f"http://127.0.0.1:{port}"
    finally:
        p.terminate()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


@pytest.fixture(scope="module")
def server():
    port = free_port()
    env_bin = [BIN, "serve", "--listen", f"127.0.0.1:{port}"]
    with process(env_bin, port, "kubewhy serve") as url:
        yield url


@pytest.fixture(scope="module")
def exported():
    with tempfile.TemporaryDirectory(prefix="kubewhy-site-") as d:
        out = Path(d) / "site"
        r = subprocess.run([BIN, "site", "export", str(out)], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        assert (out / "index.html").is_file()
        port = free_port()
        with process([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], port, "http.server", cwd=out) as url:
            yield url


@pytest.fixture(scope="module")
def browser():
    SHOTS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="kubewhy-chromium-") as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for a in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1280,1000", f"--user-data-dir={profile}"]:
            opts.add_argument(a)
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        driver.set_page_load_timeout(60)
        try:
            yield driver
        finally:
            driver.quit()


def shot(driver, name: str) -> None:
    # A full-height screenshot: grow the window to the page, capture, restore.
    height = min(driver.execute_script("return document.documentElement.scrollHeight"), 6000)
    driver.set_window_size(1280, max(800, height))
    driver.save_screenshot(str(SHOTS / f"{name}.png"))
    driver.set_window_size(1280, 1000)


def check_page(driver) -> None:
    """Every page: a <title>, one <h1>, and a <label> for every visible form control."""
    assert driver.title.strip() and "kubewhy" in driver.title, driver.title
    h1 = driver.find_elements(By.TAG_NAME, "h1")
    assert len(h1) == 1 and h1[0].text.strip(), [h.text for h in h1]
    for el in driver.find_elements(By.CSS_SELECTOR, "input:not([type=hidden]), select, textarea"):
        cid = el.get_attribute("id")
        assert cid, f"a form control without id: {el.get_attribute('outerHTML')[:120]}"
        labels = driver.find_elements(By.CSS_SELECTOR, f"label[for='{cid}']")
        assert labels and labels[0].text.strip(), f"no label for #{cid}"


def wait(driver, cond, timeout=30):
    return WebDriverWait(driver, timeout).until(cond)


def search_from_home(driver, base: str, name: str):
    """Loads home, searches QUERY with the home search box, returns the result links."""
    driver.get(base + "/")
    check_page(driver)
    assert driver.find_elements(By.TAG_NAME, "h2"), "home has no sections"
    areas = driver.find_elements(By.CSS_SELECTOR, "section.area h3")
    assert len(areas) >= 9, [a.text for a in areas]
    shot(driver, f"{name}-home")
    box = driver.find_element(By.ID, "q")
    box.send_keys(QUERY)
    box.submit()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#results li a.result")))
    check_page(driver)
    assert QUERY in driver.find_element(By.TAG_NAME, "h1").text.lower()
    links = driver.find_elements(By.CSS_SELECTOR, "#results li a.result")
    hrefs = [a.get_attribute("href") for a in links[:5]]
    assert any(EXPECTED_HIT.split("/")[1] in h for h in hrefs), hrefs
    snippets = driver.find_elements(By.CSS_SELECTOR, "#results .snippet mark")
    assert snippets, "no highlighted words in the snippets"
    facets = driver.find_elements(By.CSS_SELECTOR, "#facets a")
    assert len(facets) >= 2, "no kind filters"
    shot(driver, f"{name}-search")
    return links


def open_top_result_and_follow_relation(driver, links, name: str):
    top_title = links[0].text.strip()
    links[0].click()
    wait(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "h2#relations")))
    check_page(driver)
    assert driver.find_element(By.TAG_NAME, "h1").text.strip() == top_title
    shot(driver, f"{name}-top-result")
    rel = driver.find_elements(By.CSS_SELECTOR, ".relations a.rel-link")
    assert rel, "the top result has no relation links"
    here = driver.current_url
    target_text = rel[0].text.strip()
    rel[0].click()
    wait(driver, EC.url_changes(here))
    wait(driver, EC.presence_of_element_located((By.TAG_NAME, "h1")))
    check_page(driver)
    assert driver.find_element(By.TAG_NAME, "h1").text.strip() == target_text
    # The way back exists: the page we came from is linked from this one's relation panels.
    back = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, ".relations a.rel-link")]
    assert any(h.rstrip("/") == here.rstrip("/") for h in back), (here, back[:20])
    shot(driver, f"{name}-relation")


def test_browse_search_relation_diagnose_and_chain(server, browser):
    d = browser
    links = search_from_home(d, server, "serve")
    open_top_result_and_follow_relation(d, links, "serve")

    # Diagnose: the same answer as `kubewhy why`.
    d.get(server + "/diagnose")
    check_page(d)
    d.find_element(By.ID, "symptom").send_keys(SYMPTOM)
    d.find_element(By.CSS_SELECTOR, "form.diagnose button[type=submit]").click()
    wait(d, EC.presence_of_element_located((By.CSS_SELECTOR, "ol.candidates li.candidate")))
    check_page(d)
    first = d.find_element(By.CSS_SELECTOR, "ol.candidates li.candidate h3 a")
    why = subprocess.run([BIN, "why", "-o", "json", SYMPTOM], capture_output=True, text=True, timeout=120)
    assert why.returncode == 0, why.stderr
    import json
    expected = json.loads(why.stdout)["candidates"]
    assert first.get_attribute("href").endswith("/e/" + expected[0]["id"]), (first.get_attribute("href"), expected[0]["id"])
    shown = [a.get_attribute("href").rsplit("/e/", 1)[1] for a in d.find_elements(By.CSS_SELECTOR, "ol.candidates li.candidate h3 a")]
    assert shown == [c["id"] for c in expected], (shown, [c["id"] for c in expected])
    shot(d, "serve-diagnose")

    # The SVG causal chain of a failure mode with causes.
    d.get(server + "/e/" + EXPECTED_HIT)
    check_page(d)
    svg = d.find_element(By.CSS_SELECTOR, "svg.chain")
    size = svg.size
    assert size["width"] > 100 and size["height"] > 40, size
    nodes = svg.find_elements(By.CSS_SELECTOR, "a[data-id]")
    ids = [n.get_attribute("data-id") for n in nodes]
    assert EXPECTED_HIT in ids and len(ids) >= 2, ids
    assert svg.find_elements(By.CSS_SELECTOR, "path.edge"), "the chain has no arrows"
    mech = d.find_element(By.CSS_SELECTOR, "svg.mechanism")
    mids = [n.get_attribute("data-id") for n in mech.find_elements(By.CSS_SELECTOR, "a[data-id]")]
    assert any(i.startswith("loop/") for i in mids) and any(i.startswith("component/") for i in mids), mids
    assert d.execute_script("return arguments[0].getBBox().width", svg) > 0
    shot(d, "serve-chain")

    # A feature gate's page and a KEP's page link each other.
    d.get(server + "/e/feature-gate/SidecarContainers")
    check_page(d)
    assert d.find_elements(By.CSS_SELECTOR, "table.lifecycle tbody tr"), "no lifecycle table"
    kep = d.find_element(By.CSS_SELECTOR, "a[href='/e/kep/753']")
    shot(d, "serve-gate")
    kep.click()
    wait(d, EC.url_contains("/e/kep/753"))
    check_page(d)
    assert "KEP" in d.title or "Sidecar" in d.find_element(By.TAG_NAME, "h1").text
    assert d.find_elements(By.CSS_SELECTOR, "a[href='/e/feature-gate/SidecarContainers']"), "the KEP does not link its gate"
    shot(d, "serve-kep")

    # The gate table, the SPARQL page.
    d.get(server + "/gates?version=1.30")
    check_page(d)
    assert len(d.find_elements(By.CSS_SELECTOR, "#gates tbody tr")) > 100
    shot(d, "serve-gates")
    d.get(server + "/sparql")
    check_page(d)
    d.find_element(By.CSS_SELECTOR, "form.sparql button[type=submit]").click()
    wait(d, EC.presence_of_element_located((By.CSS_SELECTOR, "table.solutions tbody tr")))
    check_page(d)
    shot(d, "serve-sparql")


def test_exported_site_search(exported, browser):
    d = browser
    links = search_from_home(d, exported, "export")
    open_top_result_and_follow_relation(d, links, "export")
    d.get(exported + "/e/" + EXPECTED_HIT + "/")
    svg = d.find_element(By.CSS_SELECTOR, "svg.chain")
    assert svg.size["width"] > 100
    d.get(exported + "/diagnose/")
    check_page(d)
    assert "kubewhy serve" in d.find_element(By.TAG_NAME, "main").text
    # Every stylesheet and script loaded (no broken relative links).
    for path in ["/assets/site.css", "/assets/site.js", "/search-index.json"]:
        with urllib.request.urlopen(exported + path, timeout=10) as r:
            assert r.status == 200
