"""A wafer map: defect hits filled into histd from numpy, plotted with its projections.

    python wafer_map.py [--address 127.0.0.1:7440] [--output wafer_map.png] [--samples N]

Simulates hits on a 300 mm wafer (a uniform background, a hot cluster near the edge and a
scratch), fills them as (x, y) coordinates in mm into a 256 x 256 histogram, then draws the
map (mplhep.hist2dplot on a UHI snapshot) with the x projection above it and the y
projection beside it, and the 50% / 99% quantiles of each, into a PNG (Agg backend).
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import mplhep  # noqa: E402
import numpy as np  # noqa: E402

import histd  # noqa: E402

RADIUS = 150.0  # mm


def simulate(samples: int, rng: np.random.Generator) -> tuple:
    """(x, y) in mm: 70% background inside the wafer, 20% cluster, 10% scratch."""
    n_bg, n_cluster = int(samples * 0.7), int(samples * 0.2)
    n_scratch = samples - n_bg - n_cluster
    r = RADIUS * np.sqrt(rng.random(n_bg))
    phi = rng.uniform(0, 2 * np.pi, n_bg)
    bg = np.stack([r * np.cos(phi), r * np.sin(phi)], axis=1)
    cluster = rng.normal([80.0, -60.0], 8.0, (n_cluster, 2))
    t = rng.uniform(-1, 1, n_scratch)
    scratch = np.stack([-90 + 120 * t, 40 + 35 * t], axis=1) + rng.normal(0, 0.6, (n_scratch, 2))
    xy = np.concatenate([bg, cluster, scratch]).astype(np.float32)
    return xy[:, 0], xy[:, 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", default=histd.DEFAULT_ADDRESS)
    parser.add_argument("--output", default="wafer_map.png")
    parser.add_argument("--name", default="example-wafer")
    parser.add_argument("--samples", type=int, default=2_000_000)
    args = parser.parse_args()

    client = histd.Client(args.address)
    if args.name in client:
        client.delete(args.name)
    wafer = client.create(args.name, rows=256, cols=256, cap=255,
                          x=(-RADIUS, RADIUS), y=(-RADIUS, RADIUS))
    xs, ys = simulate(args.samples, np.random.default_rng(2026))
    wafer.fill(x=xs, y=ys)

    snapshot = wafer.snapshot()
    x_proj, y_proj = wafer.projection("x"), wafer.projection("y")
    x_edges, y_edges = snapshot.axes[0].edges, snapshot.axes[1].edges
    x_q = wafer.quantiles([0.5, 0.99], axis="x").axis_values
    y_q = wafer.quantiles([0.5, 0.99], axis="y").axis_values

    fig = plt.figure(figsize=(8, 8))
    grid = fig.add_gridspec(2, 2, width_ratios=(4, 1), height_ratios=(1, 4),
                            wspace=0.05, hspace=0.05)
    ax = fig.add_subplot(grid[1, 0])
    top = fig.add_subplot(grid[0, 0], sharex=ax)
    side = fig.add_subplot(grid[1, 1], sharey=ax)
    mplhep.hist2dplot(snapshot, ax=ax, cbar=False, cmap="viridis")
    ax.add_patch(plt.Circle((0, 0), RADIUS, fill=False, color="white", lw=0.8))
    ax.set_xlabel("x [mm]")
    ax.set_ylabel("y [mm]")
    top.stairs(x_proj, x_edges, fill=True, color="tab:blue")
    side.stairs(y_proj, y_edges, fill=True, color="tab:blue", orientation="horizontal")
    for q, style in zip(x_q, ("--", ":")):
        top.axvline(q, color="k", ls=style, lw=0.8)
    for q, style in zip(y_q, ("--", ":")):
        side.axhline(q, color="k", ls=style, lw=0.8)
    top.set_ylabel("hits / column")
    side.set_xlabel("hits / row")
    top.tick_params(labelbottom=False)
    side.tick_params(labelleft=False)
    info = wafer.info()
    top.set_title(f"{args.name}: {info.samples_applied:,} hits, "
                  f"{info.saturated_bins} saturated bins (cap {info.cap})")
    fig.savefig(args.output, dpi=100, bbox_inches="tight")
    print(f"{args.output}: {info.samples_applied:,} samples in {info.rows} x {info.cols} bins, "
          f"x median {x_q[0]:.1f} mm, y median {y_q[0]:.1f} mm")


if __name__ == "__main__":
    main()
