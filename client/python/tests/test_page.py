"""The daemon's web page in a real browser: headless Chromium (Debian's ``chromium``,
installed by deploy/install-deps.sh) driven over the DevTools protocol (websocket-client
from PyPI) loads the page from a running daemon's HTTP endpoint. Checks: the histogram list
(DOM), a heatmap that is there and not blank (the page's DOM and the pixels of a
screenshot, decoded with Pillow), a zoom by dragging a rectangle with real mouse events (the
daemon renders exactly the region the drag selects), and the log toggle (more of the
heatmap above the lowest colour)."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
from PIL import Image

import histd

VIRIDIS_LOW = (68, 1, 84)  # viridis[0]: empty bins
# viridis' green channel rises monotonically (1 at the bottom, 231 at the top): a pixel's
# green says how high on the scale it is. viridis[64] has 82, viridis[128] 145.
GREEN_QUARTER, GREEN_HALF = 82, 145


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no chromium on PATH: deploy/install-deps.sh installs Debian's chromium")


class Browser:
    """One headless Chromium and a DevTools session on its first page."""

    def __init__(self, profile: str) -> None:
        import websocket  # websocket-client
        args = [chromium_binary(), "--headless=new", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--remote-debugging-port=0",
                "--remote-allow-origins=*", f"--user-data-dir={profile}",
                "--window-size=1280,1100", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium's sandbox refuses root
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                        text=True)
        endpoint = None
        deadline = time.monotonic() + 60
        while endpoint is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            if "DevTools listening on " in line:
                endpoint = line.split("DevTools listening on ", 1)[1].strip()
        if endpoint is None:
            self.process.kill()
            pytest.fail("chromium did not start its DevTools endpoint")
        port = endpoint.split("//", 1)[1].split("/", 1)[0]
        with urllib.request.urlopen(f"http://{port}/json/list") as r:
            pages = [t for t in json.load(r) if t["type"] == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"],
                                              suppress_origin=True, timeout=60)
        self.next_id = 0

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def eval(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                value = self.eval(expression)
            except RuntimeError:  # the page is still loading (no body yet)
                value = None
            if value:
                return value
            time.sleep(0.1)
        error = self.eval("document.getElementById('error').textContent")
        pytest.fail(f"timed out waiting for {expression} (page error: {error!r})")

    def screenshot(self) -> np.ndarray:
        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))

    def mouse(self, kind: str, x: float, y: float) -> None:
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                  buttons=1 if kind != "mouseReleased" else 0, clickCount=1)

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def browser(tmp_path):
    b = Browser(str(tmp_path / "profile"))
    yield b
    b.close()


@pytest.fixture
def site(start_daemon):
    """A daemon with its HTTP endpoint and two histograms; yields (base URL, samples)."""
    d = start_daemon("--http_address=127.0.0.1:0")
    assert d.http_address, "histd wrote no HTTP address to --ready_file"
    with histd.Client(d.address, timeout=60) as client:
        wafer = client.create("wafer", 256, 1024, cap=200, x=(-1.0, 1.0), y=(-1.0, 1.0))
        rng = np.random.default_rng(3)
        # A cluster of about 160 samples in its central bins (cap 200), counts falling to 1
        # and 0 over a few sigma: 31 columns and 13 rows.
        x = rng.normal(0.2, 0.06, 400_000)
        y = rng.normal(-0.1, 0.1, 400_000)
        wafer.fill(x=x, y=y)
        wafer.fill(np.full(300, 200 * 1024 + 900))  # one saturated bin, far from the cluster
        client.create("other", 16, 16).fill(np.arange(256))
        yield f"http://{d.http_address}", wafer.info().samples_applied


def heatmap_box(browser):
    return browser.eval("(() => { const b = document.getElementById('heatmap')"
                        ".getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; })()")


def heatmap_pixels(browser) -> np.ndarray:
    left, top, width, height = (int(round(v)) for v in heatmap_box(browser))
    return browser.screenshot()[top:top + height, left:left + width]


def test_the_list_shows_every_histogram_with_its_counters(browser, site):
    base, applied = site
    browser.call("Page.navigate", url=base + "/")
    browser.wait_for("document.body.dataset.histograms === '2'")
    rows = browser.eval("[...document.querySelectorAll('#histograms tbody tr')]"
                        ".map(r => [...r.cells].map(c => c.textContent))")
    assert [r[0] for r in rows] == ["other", "wafer"]
    wafer = rows[1]
    assert wafer[1] == "256 x 1024" and wafer[2] == "200"
    assert wafer[5].replace(",", "") == str(applied)
    links = browser.eval("[...document.querySelectorAll('#histograms a')].map(a => a.href)")
    assert links == [base + "/histogram/other", base + "/histogram/wafer"]


def test_the_heatmap_is_drawn_zooms_to_a_dragged_rectangle_and_switches_to_log(browser, site):
    base, _ = site
    browser.call("Page.navigate", url=base + "/histogram/wafer")
    browser.wait_for("Number(document.body.dataset.renders) >= 1")
    assert browser.eval("document.getElementById('heatmap').dataset.region") == "0:256,0:1024"
    left, top, width, height = heatmap_box(browser)
    assert width >= 512 and height >= 128
    assert browser.eval("document.getElementById('heatmap').naturalWidth") == width

    # Not blank: many colours, mostly the empty colour, a bright cluster, the saturated bin.
    pixels = heatmap_pixels(browser)
    colours = {tuple(p) for p in pixels.reshape(-1, 3)[::7]}
    assert len(colours) > 30
    empty = np.all(pixels == VIRIDIS_LOW, axis=2).mean()
    assert 0.3 < empty < 0.99
    red = np.all(pixels == (255, 0, 0), axis=2)
    assert red.any()                                              # the saturated bin
    assert pixels[..., 1][~red].max() > GREEN_HALF                # the cluster's peak
    linear_bright = (pixels[..., 1][~red] > GREEN_QUARTER).mean()

    # Drag a rectangle over the cluster with real mouse events.
    px0, py0 = round(left + 0.55 * width), round(top + 0.38 * height)
    px1, py1 = round(left + 0.65 * width), round(top + 0.52 * height)
    browser.mouse("mousePressed", px0, py0)
    browser.mouse("mouseMoved", (px0 + px1) // 2, (py0 + py1) // 2)
    browser.mouse("mouseMoved", px1, py1)
    browser.mouse("mouseReleased", px1, py1)
    x0, y0, x1, y1 = px0 - left, py0 - top, px1 - left, py1 - top
    rows = (int(np.floor(y0 / height * 256)), int(np.ceil(y1 / height * 256)))
    cols = (int(np.floor(x0 / width * 1024)), int(np.ceil(x1 / width * 1024)))
    want = f"{rows[0]}:{rows[1]},{cols[0]}:{cols[1]}"
    browser.wait_for(f"document.getElementById('heatmap').dataset.region === '{want}'")
    assert f"rows={rows[0]}:{rows[1]}&cols={cols[0]}:{cols[1]}" in browser.eval("location.hash")
    zoomed = heatmap_pixels(browser)
    # The region is the cluster's core (within about 1.6 sigma): hardly an empty bin.
    assert np.all(zoomed == VIRIDIS_LOW, axis=2).mean() < 0.1

    # Back to the whole histogram, then log scale: the cluster's tails brighten.
    renders = browser.eval("Number(document.body.dataset.renders)")
    browser.eval("document.getElementById('unzoom').click()")
    browser.wait_for("document.getElementById('heatmap').dataset.region === '0:256,0:1024'")
    browser.wait_for(f"Number(document.body.dataset.renders) > {renders}")
    renders = browser.eval("Number(document.body.dataset.renders)")
    browser.eval("document.getElementById('scale').click()")
    browser.wait_for(f"Number(document.body.dataset.renders) > {renders}")
    assert "scale=log" in browser.eval("location.hash")
    log_pixels = heatmap_pixels(browser)
    log_red = np.all(log_pixels == (255, 0, 0), axis=2)
    log_bright = (log_pixels[..., 1][~log_red] > GREEN_QUARTER).mean()
    assert log_bright > 2 * linear_bright

    # The projections are drawn: the teal line (#21918c) across both canvases.
    for canvas in ("colproj", "rowproj"):
        drawn = browser.eval(f"(() => {{ const c = document.getElementById('{canvas}');"
                             "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                             "let n = 0; for (let i = 0; i < d.length; i += 4)"
                             "  n += d[i + 3] > 128 && d[i + 1] - d[i] > 60;"
                             "return n; })()")
        assert drawn > 200, canvas


def test_render_route_and_its_errors(site):
    base, _ = site

    def get(path):
        try:
            with urllib.request.urlopen(base + path) as r:
                return r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read()

    status, headers, body = get("/render/wafer.png?width=300&height=70&bare=1&rows=10:74&cols=:512")
    assert status == 200 and headers["Content-Type"] == "image/png"
    assert Image.open(io.BytesIO(body)).size == (300, 70)
    assert headers["X-Histd-Region"] == "10:74,0:512"
    status, _, body = get("/render/wafer.png?width=300&height=70")
    assert status == 200 and Image.open(io.BytesIO(body)).size[0] > 300  # framed
    assert get("/render/nope.png")[0] == 404
    assert get("/render/wafer.png?width=99999")[0] == 400
    assert get("/render/wafer.png?scale=log&zmin=0")[0] == 400
    assert get("/render/wafer.png?rows=5:900")[0] == 400
    assert get("/render/wafer.png?pool=median")[0] == 400
    status, _, body = get("/api/view/wafer?out_rows=1&out_cols=8")
    view = json.loads(body)
    assert status == 200 and view["rows"] == 1 and view["cols"] == 8 and len(view["values"]) == 8
    assert get("/api/histograms")[0] == 200
    post = urllib.request.Request(base + "/render/wafer.png", data=b"", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(post)
    assert refused.value.code in (404, 405)  # the pages are read-only
