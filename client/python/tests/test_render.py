"""Render and Watch against the daemon. PNGs are decoded with Pillow (an independent PNG
decoder; the daemon encodes with libpng) and their colours compared with matplotlib's own
viridis colormap: the pixels over a hot bin, an empty region and a saturated bin, and how
the log scale and zmin/zmax change them."""

import matplotlib
import numpy as np
import pytest
from PIL import Image

import histd

ROWS, COLS, CAP = 64, 256, 200
SATURATED = (255, 0, 0)


def viridis(index):
    """Entry ``index`` (0..255) of matplotlib's viridis as 8-bit RGB."""
    r, g, b, _ = matplotlib.colormaps["viridis"](int(index))
    return tuple(int(round(255 * c)) for c in (r, g, b))


def decode(png):
    image = Image.open(__import__("io").BytesIO(png))
    assert image.format == "PNG"
    return image.convert("RGB")


@pytest.fixture(scope="module")
def wafer(client):
    h = client.create("render-module", ROWS, COLS, cap=CAP, x=(-1.0, 1.0), y=(0.0, 64.0))
    hits = np.concatenate([np.full(100, 10 * COLS + 100),   # a hot bin: 100
                           np.full(250, 40 * COLS + 20),    # saturated at cap 200
                           np.full(10, 40 * COLS + 21)])    # 10
    h.fill(hits)
    yield h
    h.delete()


def test_a_bare_render_is_exactly_the_requested_size(wafer):
    for width, height in [(512, 128), (1000, 300), (7, 3), (256, 64)]:
        png = wafer.render(width, height, bare=True)
        assert Image.open(__import__("io").BytesIO(png)).mode == "P"  # an 8-bit palette PNG
        image = decode(png)
        assert image.size == (width, height)


def test_a_framed_render_adds_labels_and_a_colour_bar(wafer):
    image = decode(wafer.render(512, 128))
    assert image.size[0] > 512 and image.size[1] > 128
    pixels = np.asarray(image)
    # Label text in viridis' darkest colour (the palette's 256 colours: viridis' 254, red,
    # white), left of the heatmap's 66-pixel margin.
    assert (pixels[:, :60] == viridis(0)).all(axis=2).sum() > 100
    assert (pixels[:, :60] == (255, 255, 255)).all(axis=2).mean() > 0.5  # white background
    assert (pixels == SATURATED).all(axis=2).sum() > 50   # the saturated swatch and bin


def test_hot_empty_and_saturated_pixels(wafer):
    # 64 x 256 bins at 512 x 128 pixels: bin (r, c) is pixels x 2c..2c+1, y 2r..2r+1.
    image = decode(wafer.render(512, 128, bare=True))
    assert image.getpixel((200, 20)) == viridis(128)     # 100 of zmax 200: round(127.5)
    assert image.getpixel((201, 21)) == viridis(128)
    assert image.getpixel((40, 80)) == SATURATED         # the bin at cap
    assert image.getpixel((42, 80)) == viridis(13)       # 10 of 200: round(12.75)
    assert image.getpixel((300, 120)) == viridis(0)      # empty
    assert SATURATED not in {viridis(i) for i in range(256)}


def test_log_scale_and_zmin_zmax_change_the_colours_as_specified(wafer):
    hot, ten = (200, 20), (42, 80)
    log = decode(wafer.render(512, 128, bare=True, scale="log"))
    # log10(100) / log10(200) = 0.869 -> 222; log10(10) / log10(200) = 0.435 -> 111
    assert log.getpixel(hot) == viridis(round(255 * np.log10(100) / np.log10(200)))
    assert log.getpixel(ten) == viridis(round(255 * np.log10(10) / np.log10(200)))
    assert log.getpixel((300, 120)) == viridis(0)
    assert log.getpixel((40, 80)) == SATURATED
    clipped = decode(wafer.render(512, 128, bare=True, zmax=50))
    assert clipped.getpixel(hot) == viridis(255)         # above zmax: the top colour
    assert clipped.getpixel(ten) == viridis(51)          # 10 of 50
    raised = decode(wafer.render(512, 128, bare=True, zmin=20, zmax=120))
    assert raised.getpixel(ten) == viridis(0)            # below zmin: the bottom colour
    assert raised.getpixel(hot) == viridis(204)          # (100 - 20) / 100 -> round(204)
    assert raised.getpixel((40, 80)) == SATURATED


def test_sum_and_max_pooling_of_a_region(wafer):
    # rows 0:32 x cols 64:192 (32 x 128 bins) at 64 x 16 pixels: 2 x 2 bins a pixel.
    zoom = decode(wafer.render(64, 16, rows=slice(0, 32), cols=slice(64, 192), bare=True,
                               zmax=400))
    assert zoom.getpixel((18, 5)) == viridis(64)         # bin (10, 100): 100 of 400
    peak = decode(wafer.render(64, 16, rows=slice(0, 32), cols=slice(64, 192), bare=True,
                               zmax=400, pool="max"))
    assert peak.getpixel((18, 5)) == viridis(64)


def test_bad_renders_raise(wafer):
    with pytest.raises(histd.InvalidArgumentError):
        wafer.render(5000, 10)
    with pytest.raises(histd.InvalidArgumentError):
        wafer.render(10, 10, scale="log", zmin=0)
    with pytest.raises(ValueError):
        wafer.render(10, 10, scale="cubic")
    with pytest.raises(ValueError):
        wafer.render(10, 10, rows=slice(3, 3))


def test_watch_yields_the_pooled_view_then_changes(client):
    h = client.create("watch-module", 37, 301)
    try:
        rng = np.random.default_rng(5)
        h.fill(rng.integers(0, 37 * 301, 20_000))
        bins = h.values().astype(np.uint32)
        views = h.watch((10, 47), interval=0.1)
        first = next(views)
        assert first.sequence == 1 and first.values.shape == (10, 47)
        # Cell i of n over R bins covers [floor(i R / n), floor((i + 1) R / n)).
        rows = np.floor(np.arange(10) * 37 / 10).astype(int)
        cols = np.floor(np.arange(47) * 301 / 47).astype(int)
        want = np.add.reduceat(np.add.reduceat(bins, rows, axis=0), cols, axis=1)
        assert np.array_equal(first.values, want)
        h.fill([0, 0, 0])
        second = next(views)
        assert second.sequence == 2 and second.values[0, 0] == want[0, 0] + 3
        views.close()  # cancels the stream
    finally:
        h.delete()
