"""What every figure shares: matplotlib without a display, the legend
below the axes (never over the data), and the file written whole."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is set)

from .tables import replace_whole  # noqa: E402

# Colours that stay apart for the colour-blind (Paul Tol's bright set).
COLOURS = ["#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee",
           "#aa3377", "#bbbbbb", "#000000"]


def panels(n, width=6.0, height=4.5):
    """A figure of N panels side by side and the list of their axes."""
    fig, axes = plt.subplots(1, n, figsize=(width * n, height),
                             squeeze=False)
    return fig, list(axes[0])


def legend_below(ax, ncol=3):
    """AX's legend under its x axis, outside the data area."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, labels, loc="upper center",
                  bbox_to_anchor=(0.5, -0.16), ncol=ncol, frameon=False)


def save(fig, path):
    """FIG as a PNG at PATH, replaced whole; ReportError on failure."""
    try:
        replace_whole(path, lambda tmp: fig.savefig(tmp, format="png",
                                                     dpi=100,
                                                     bbox_inches="tight"))
    finally:
        plt.close(fig)
