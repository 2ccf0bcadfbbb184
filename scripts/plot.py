#!/usr/bin/env python3
"""Draws the figures of `dualgibbs reproduce` from the CSV and JSON files it wrote.

    plot.py FIG DIR      reads DIR/FIG.csv (and DIR/FIG_*.csv, DIR/FIG.json), writes DIR/FIG.png and DIR/FIG.pdf

FIG is fig5 ... fig11, accuracy, rates, accel, validate (`dualgibbs validate --out DIR`), or any convergence table with the
columns of fig6 (the `converge` subcommand and the default run). Each output is written to a new, exclusively created file with
an unpredictable name and then renamed into place.
Exit status: 0 on success, 3 if matplotlib/numpy are missing, 2 on bad arguments or unreadable input.
"""
import csv
import json
import math
import os
import sys
import tempfile

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
except ImportError as exc:  # pragma: no cover - depends on the machine
    print(f"plot.py: matplotlib/numpy not available ({exc})", file=sys.stderr)
    sys.exit(3)

PRIMAL, DUAL = "#1f77b4", "#d62728"


def read_csv(path):
    """Returns (columns, dict name -> numpy array of floats, labels or None)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        raise ValueError(f"{path} is empty")
    header, body = rows[0], rows[1:]
    data, labels = {}, None
    for c, name in enumerate(header):
        vals = [r[c] for r in body]
        try:
            data[name] = np.array([float(v) for v in vals])
        except ValueError:
            labels = vals
    return header, data, labels


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def rate(js, label, fitted_from="Eu"):
    """Predicted -ln r for a rate row of the sidecar (NaN if absent)."""
    for r in js.get("rates", []):
        if r.get("label") == label and r.get("fitted_from") == fitted_from:
            v = r.get("predicted_neg_log_rate")
            return float("nan") if v is None else v
    return float("nan")


def symlog(ax, *arrays):
    v = np.concatenate([np.abs(np.asarray(a, float)).ravel() for a in arrays])
    v = v[np.isfinite(v) & (v > 0)]
    vmax = v.max() if v.size else 1.0
    lt = vmax * 1e-4
    ax.set_yscale("symlog", linthresh=lt, linscale=0.5)
    ax.set_ylim(bottom=-10 * lt, top=2.0 * vmax)


def save(fig, out_dir, name):
    """Writes DIR/NAME.png and DIR/NAME.pdf, each to a new file with an unpredictable name, created exclusively
    (mkstemp: O_CREAT | O_EXCL, so a link planted in DIR is never followed), then renamed into place (rename replaces a
    link at the final name itself, never its target). A failure removes the temporary file."""
    for ext in ("png", "pdf"):
        final = os.path.join(out_dir, f"{name}.{ext}")
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=f".{ext}", dir=out_dir)
        try:
            with os.fdopen(fd, "wb") as f:
                fig.savefig(f, format=ext, dpi=110, bbox_inches="tight")
            os.replace(tmp, final)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    plt.close(fig)


def convergence(d, js, name, out_dir, title):
    """fig6, fig11, converge, demo: normalised Eu against sweeps and time, +-1 standard error."""
    _, c, _ = d
    sw = c["sweep"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    # A model without a dual (a given precision of factor width above 2) has the primal columns alone.
    domains = [(dom, col) for dom, col in (("primal", PRIMAL), ("dual", DUAL)) if f"Eu_{dom}" in c]
    for dom, col in domains:
        e0 = c[f"Eu_{dom}"][0]
        y = c[f"Eu_{dom}"] / e0
        se = c[f"Eu_se_{dom}"] / abs(e0)
        lab = "Primal Gibbs" if dom == "primal" else "Dual Gibbs (x~, Woodbury)"
        for ax, x in ((axes[0], sw), (axes[1], c[f"time_{dom}"])):
            ax.plot(x, y, color=col, lw=1.6, label=lab)
            ax.fill_between(x, y - se, y + se, color=col, alpha=0.18, lw=0)
    if "Eu_dual_cv" in c:
        # The dual chains through the flow control variate, on the dual's scale (normalised by the plug-in's Eu at
        # sweep 0), so the gap between the two dual curves is the accuracy the control variate buys.
        e0 = c["Eu_dual"][0]
        y = c["Eu_dual_cv"] / e0
        se = c["Eu_se_dual_cv"] / abs(e0)
        for ax, x in ((axes[0], sw), (axes[1], c["time_dual"])):
            ax.plot(x, y, color=DUAL, ls="--", lw=1.4, label="Dual Gibbs + flow control variate")
            ax.fill_between(x, y - se, y + se, color=DUAL, alpha=0.10, lw=0)
    rp = rate(js, "primal")
    rd = rate(js, "dual x~") if "Eu_dual" in c else math.nan
    t = np.linspace(0, sw.max(), 200)
    if math.isfinite(rp):
        axes[0].plot(t, np.exp(-2 * rp * t), color=PRIMAL, ls=":", lw=1, label=r"$r_p^{2t}$ (spectral, paper's convention)")
        axes[0].plot(t, np.exp(-4 * rp * t), color=PRIMAL, ls="--", lw=0.8, label=r"$r_p^{4t}$ (slowest mode squared)")
    if math.isfinite(rd):
        axes[0].plot(t, np.exp(-2 * rd * t), color=DUAL, ls=":", lw=1, label=r"$r_d^{\mathrm{eff}\,2t}$ (spectral)")
    for ax in axes:
        symlog(ax, *(c[f"Eu_{dom}"] / c[f"Eu_{dom}"][0] for dom, _ in domains))
        ax.set_ylabel(r"$\hat{\mathcal{E}}$ (norm.), band $\pm 1$ s.e.")
        ax.grid(alpha=0.3, ls=":")
    axes[0].set_xlabel("Sweeps")
    axes[1].set_xlabel("Sampling wall-clock time (s)")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    save(fig, out_dir, name)


def fig5(d, js, out_dir):
    _, m, _ = read_csv(os.path.join(out_dir, "fig5_matrices.csv"))
    n = int(round(math.sqrt(len(m["i"]))))
    grid = lambda k: m[k].reshape(n, n)
    _, b, _ = d
    fig, axes = plt.subplots(2, 2, figsize=(10, 9))
    norm = matplotlib.colors.SymLogNorm(linthresh=0.05, vmin=-1.0, vmax=1.0, base=10)
    for ax, key, title in ((axes[0, 0], "primal", r"(a) $D_s^{-1/2}\,\mathrm{Cov}(X)\,D_s^{-1/2}$ (exact)"),
                           (axes[0, 1], "dual", r"(b) $D_s^{1/2}\,\widehat{\mathrm{Cov}}(\tilde X)\,D_s^{1/2}$ (dual samples)")):
        im = ax.imshow(grid(key), cmap="RdBu_r", norm=norm)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        ax.set_title(title, fontsize=10)
    res = grid("residual")
    lim = np.abs(res).max()
    im = axes[1, 0].imshow(res, cmap="RdBu_r", vmin=-lim, vmax=lim)
    fig.colorbar(im, ax=axes[1, 0], fraction=0.046, pad=0.04)
    axes[1, 0].set_title(r"(c) residual $\Delta$ = (a) + (b) $- I$", fontsize=10)
    e = b["error"]
    ax = axes[1, 1]
    ax.hist(e, bins=40, density=True, color="#639922", alpha=0.35, edgecolor="#3B6D11")
    mu, sd = e.mean(), e.std(ddof=1)
    ax.axvline(mu, color="#A32D2D", ls="--", lw=1.6, label=f"mean = {mu:.4f}")
    ax.axvline(mu - sd, color="#A32D2D", ls=":", lw=1.0, label=f"$\\pm$1 sd = {sd:.4f}")
    ax.axvline(mu + sd, color="#A32D2D", ls=":", lw=1.0)
    s = js.get("summary", {})
    if s.get("expected_bootstrap_mean_approx"):
        ax.axvline(s["expected_bootstrap_mean_approx"], color="k", ls="-.", lw=1.0,
                   label=f"sampling-noise prediction = {s['expected_bootstrap_mean_approx']:.4f}")
    ax.set_title(rf"(d) $\|\Delta\|_F/\sqrt{{|V|}}$ over {len(e)} bootstrap replicates", fontsize=10)
    ax.legend(fontsize=8)
    fig.suptitle(js.get("title", "fig5"), fontsize=10)
    save(fig, out_dir, "fig5")


def fig7(d, js, out_dir):
    _, c, _ = d
    sw = c["sweep"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for dom, col, lab in (("primal", PRIMAL, "Primal Gibbs"), ("dual", DUAL, "Dual Gibbs")):
        ax.fill_between(sw, c[f"Eu_{dom}_lo"], c[f"Eu_{dom}_hi"], color=col, alpha=0.18, lw=0)
        ax.plot(sw, c[f"Eu_{dom}_mean"], color=col, lw=1.8, label=lab + r" (mean $\pm$1 sd)")
    symlog(ax, c["Eu_primal_hi"], c["Eu_dual_hi"], c["Eu_dual_lo"])
    ax.set_xlabel("Sweeps")
    ax.set_ylabel(r"$\hat{\mathcal{E}}$ (norm.)")
    ax.legend(fontsize=9)
    ax.grid(alpha=0.3, ls=":")
    ax.set_title(js.get("title", "fig7"), fontsize=9)
    save(fig, out_dir, "fig7")


def fig8(d, js, out_dir):
    _, c, _ = d
    sw = c["sweep"]
    colors = {"random": "#1f77b4", "permutation": "#2ca02c", "fixed": "#9467bd"}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    allv = []
    for scan, col in colors.items():
        for dom, ls in (("primal", "-"), ("dual", "--")):
            key = f"Eu_{dom}_{scan}"
            if key not in c:
                continue
            y = c[key] / c[key][0]
            allv.append(y)
            ax.plot(sw, y, color=col, ls=ls, lw=1.6, label=f"{scan} ({dom})")
    symlog(ax, *allv)
    ax.set_xlabel("Sweeps")
    ax.set_ylabel(r"$\hat{\mathcal{E}}$ (norm.); solid primal, dashed dual")
    ax.legend(fontsize=8, ncol=2)
    ax.grid(alpha=0.3, ls=":")
    ax.set_title(js.get("title", "fig8"), fontsize=9)
    save(fig, out_dir, "fig8")


def fig9(d, js, out_dir):
    cols, c, _ = d
    sw = c["sweep"]
    ks = [int(n.split("_k")[-1]) for n in cols if n.startswith("Eu_primal_k")]
    theory = {}
    tpath = os.path.join(out_dir, "fig9_theory.csv")
    if os.path.exists(tpath):
        _, t, _ = read_csv(tpath)
        for i, k in enumerate(t["k"]):
            theory[int(k)] = {n: t[n][i] for n in t}
    colors = plt.cm.viridis(np.linspace(0.1, 0.85, len(ks)))
    fig, (ax, axd) = plt.subplots(1, 2, figsize=(12, 4.6))
    allv = []
    for k, col in zip(ks, colors):
        yp = c[f"Eu_norm_primal_k{k}"]
        yd = c[f"Eu_norm_dual_k{k}"]
        allv += [yp, yd]
        ax.plot(sw, yp, color=col, lw=1.6, label=f"k={k}")
        ax.plot(sw, yd, color=col, lw=1.6, ls="--")
        early = sw <= max(6, sw.max() / 12)
        axd.plot(sw[early], yd[early], color=col, lw=1.6, ls="--", marker="o", ms=3, label=f"k={k} dual")
        th = theory.get(k)
        if th is not None:
            t = np.linspace(0, sw[early].max(), 100)
            axd.plot(t, np.exp(-2 * th["pred_dual_eff"] * t), color=col, ls=":", lw=1)
    if theory:
        t = np.linspace(0, sw.max(), 200)
        anyk = theory[ks[0]]
        ax.plot(t, np.exp(-2 * anyk["closed_dual"] * t), color="k", ls=":", lw=1.2,
                label="Prop. 4 worst case $r_d^{2t}$ (all k)")
    symlog(ax, *allv)
    axd.set_yscale("symlog", linthresh=1e-5, linscale=0.5)
    axd.set_ylim(bottom=-1e-4, top=2)
    ax.set_xlabel("Sweeps")
    ax.set_ylabel(r"$\hat{\mathcal{E}}$ (norm.); solid primal, dashed dual")
    axd.set_xlabel("Sweeps (early)")
    axd.set_ylabel(r"dual $\hat{\mathcal{E}}$ (norm.); dotted Prop. 5 $r_{d,\mathrm{eff}}^{2t}$")
    ax.legend(fontsize=8)
    axd.legend(fontsize=7)
    for a in (ax, axd):
        a.grid(alpha=0.3, ls=":")
    fig.suptitle(js.get("title", "fig9"), fontsize=9)
    save(fig, out_dir, "fig9")


def fig10(d, js, out_dir):
    _, c, _ = d
    x = c["ratio"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
    for ax, logy in ((axes[0], False), (axes[1], True)):
        ax.plot(x, c["theory_primal"], color=PRIMAL, lw=1.2, label=r"primal theory $-\ln r_p$")
        ax.plot(x, c["theory_dual_eff"], color=DUAL, lw=1.2, label=r"dual theory $-\ln r_d^{\mathrm{eff}}$")
        ax.plot(x, c["asym_primal"], color=PRIMAL, lw=1, ls=":", label="primal, $|V|\\to\\infty$")
        ax.plot(x, c["asym_dual_eff"], color=DUAL, lw=1, ls=":", label="dual eff., $|E|\\to\\infty$")
        ax.axhline(c["limit_dual_eff"][0], color="k", lw=0.8, ls="--", label=r"$\lambda_2/2 = 2.5$")
        ax.plot(x, c["rate_primal"], "o", color=PRIMAL, label=r"primal, fitted from $\hat{\mathcal{E}}$")
        ax.plot(x, c["rate_dual"], "s", color=DUAL, label=r"dual, fitted from $\hat{\mathcal{E}}$")
        ax.plot(x, c["rate_primal_mean"], "o", mfc="none", color=PRIMAL, label="primal, fitted from the mean")
        ax.plot(x, c["rate_dual_mean"], "s", mfc="none", color=DUAL, label="dual x~, fitted from the mean")
        ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(r"$s/\sigma$")
        ax.set_ylabel(r"$-\ln r$ per sweep")
        ax.grid(alpha=0.3, ls=":")
    axes[0].legend(fontsize=7)
    fig.suptitle(js.get("title", "fig10"), fontsize=9)
    save(fig, out_dir, "fig10")


def rates(d, js, out_dir):
    _, c, labels = d
    fig, ax = plt.subplots(figsize=(6.5, 6))
    fam = [lab.split(":")[0] for lab in labels] if labels else ["?"] * len(c["nodes"])
    markers = {"torus": "o", "kregular": "s", "complete": "^", "bipartite": "v", "star": "*", "ws": "D"}
    for pred, fit, col, name in (("pred_primal", "fit_primal_mean", PRIMAL, "primal (mean)"),
                                 ("pred_dual", "fit_dual_mean", "#ff7f0e", "dual y~ (mean)"),
                                 ("pred_dual_eff", "fit_dual_eff_mean", DUAL, "dual x~ (mean)"),
                                 ("pred_primal", "fit_primal_Eu", "#7f7f7f", r"primal ($\hat{\mathcal{E}}$/2)")):
        for f in sorted(set(fam)):
            sel = np.array([g == f for g in fam])
            ax.plot(c[pred][sel], c[fit][sel], markers.get(f, "o"), color=col, ms=6, alpha=0.8,
                    mfc="none" if "Eu" in fit else col, label=f"{name}" if f == sorted(set(fam))[0] else None)
    v = np.concatenate([c[k][np.isfinite(c[k]) & (c[k] > 0)] for k in ("pred_primal", "pred_dual", "fit_primal_mean")])
    lo, hi = v.min() / 2, v.max() * 2
    t = np.geomspace(lo, hi, 10)
    ax.plot(t, t, "k-", lw=0.8, label="fitted = predicted")
    ax.plot(t, 2 * t, "k:", lw=0.8, label="fitted = 2 x predicted")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"predicted $-\ln r$ (spectral)")
    ax.set_ylabel(r"fitted $-\ln r$")
    handles = [plt.Line2D([], [], marker=m, ls="", color="k", mfc="none", label=f) for f, m in markers.items()
               if f in fam]
    leg = ax.legend(fontsize=8, loc="upper left")
    ax.add_artist(leg)
    ax.legend(handles=handles, fontsize=8, loc="lower right", title="family")
    ax.grid(alpha=0.3, ls=":")
    ax.set_title(js.get("title", "rates"), fontsize=8)
    save(fig, out_dir, "rates")


def accuracy(d, js, out_dir):
    """reproduce accuracy: CPU seconds to each target per graph and method (filled: reached in every replicate;
    hollow at the budget: not reached), and the achieved relative RMSE over its target (honest: <= 1)."""
    with open(os.path.join(out_dir, "accuracy.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    methods = [c[: -len("_cpu_seconds")] for c in rows[0] if c.endswith("_cpu_seconds") and c != "truth_cpu_seconds"]
    targets = sorted({float(r["target"]) for r in rows}, reverse=True)
    graphs = list(dict.fromkeys(r["graph"] for r in rows))
    colors = {"exact": "k", "primal": PRIMAL, "dual": DUAL, "dual_cv": "#2ca02c", "primal_cv": "#9467bd",
              "cholesky": "#ff7f0e", "primal_cheby_ssor": "#17becf", "primal_cv_cheby_ssor": "#bcbd22",
              "rbmc": "#8c564b", "rbmc_gibbs": "#e377c2", "probing": "#7f7f7f", "auto": "#d62728"}
    budget = float(js.get("parameters", {}).get("budget_seconds", "nan"))
    fig, axes = plt.subplots(2, len(targets), figsize=(6 * len(targets), 8), squeeze=False)
    for col, t in enumerate(targets):
        sel = {r["graph"]: r for r in rows if float(r["target"]) == t}
        for k, m in enumerate(methods):
            x = np.arange(len(graphs)) + (k - len(methods) / 2) * 0.12
            cpu = np.array([float(sel[g][f"{m}_cpu_seconds"]) if g in sel else np.nan for g in graphs])
            ok = np.array([float(sel[g][f"{m}_reached"]) == 1.0 if g in sel else False for g in graphs])
            ach = np.array([float(sel[g][f"{m}_achieved_rel_rmse"]) if g in sel else np.nan for g in graphs])
            c = colors.get(m, "#7f7f7f")
            ax = axes[0, col]
            ax.plot(x[ok], cpu[ok], "o", color=c, label=m.replace("_", "-"))
            miss = ~ok & np.isfinite(cpu)
            if miss.any():
                ax.plot(x[miss], np.full(miss.sum(), budget if math.isfinite(budget) else np.nanmax(cpu)), "o",
                        mfc="none", color=c)
            if m != "exact":
                axes[1, col].plot(x[ok], ach[ok] / t, "o", color=c, label=m.replace("_", "-"))
        ax = axes[0, col]
        ax.set_yscale("log")
        ax.set_ylabel("CPU seconds (hollow: not reached)")
        ax2 = axes[1, col]
        ax2.axhline(1.0, color="k", lw=0.8)
        ax2.axhline(1.5, color="k", ls=":", lw=0.8)
        ax2.set_ylabel("achieved rel. RMSE / target")
        for a in (ax, ax2):
            a.set_xticks(np.arange(len(graphs)))
            a.set_xticklabels(graphs, rotation=30, ha="right", fontsize=7)
            a.grid(alpha=0.3, ls=":")
        ax.legend(fontsize=7)
        ax.set_title(f"target {t:g}", fontsize=9)
    fig.suptitle(js.get("title", "accuracy"), fontsize=9)
    fig.tight_layout()
    save(fig, out_dir, "accuracy")


def accel(d, js, out_dir):
    """reproduce accel: per graph, the ensemble mean's relative error (upper row) and the covariance error
    |1 - sum var^ / sum Var| over the node subset (lower row) of gibbs, ssor and cheby-ssor against sweep-equivalents
    and CPU seconds, primal x and dual x~; mean: the predicted decay dashed, the Monte Carlo floor dotted; on the CPU
    axes the CPU time of as many CHOLMOD exact draws as there are chains (black, solid) and with the factorization
    (black, dotted), from accel_exact.csv."""
    _, c, labels = d
    labels = np.array(labels)
    cov_path = os.path.join(out_dir, "accel_covariance.csv")
    cov = read_csv(cov_path) if os.path.exists(cov_path) else None
    exact_path = os.path.join(out_dir, "accel_exact.csv")
    exact = read_csv(exact_path) if os.path.exists(exact_path) else None
    graphs = []
    for lab in labels:
        g = lab.split(" ")[0]
        if g not in graphs:
            graphs.append(g)
    colors = {"gibbs": "#7f7f7f", "ssor": "#ff7f0e", "cheby-ssor": "#2ca02c"}
    fig, axes = plt.subplots(2 * len(graphs), 4, figsize=(19, 4.2 * 2 * len(graphs)), squeeze=False)
    for gi, graph in enumerate(graphs):
        for di, dom in enumerate(("primal", "dual")):
            lines = []  # (cpu seconds, style, label) of CHOLMOD on this domain
            if exact is not None:
                _, e, elab = exact
                rows = [k for k in range(len(elab)) if elab[k] == graph]
                pick = [k for k in rows if e["domain_dual"][k] == (1.0 if dom == "dual" else 0.0)] or \
                    [k for k in rows if e["domain_dual"][k] == 0.0]
                if pick:
                    k = pick[0]
                    draws = e["chains"][k] * e["cpu_seconds_per_draw"][k]
                    lines = [(draws, "-", f"CHOLMOD: {e['chains'][k]:.0f} exact draws"),
                             (draws + e["factorize_cpu_seconds"][k], ":", "CHOLMOD: factorization + draws")]
            for scheme, color in colors.items():
                lab = f"{graph} {scheme} {dom}"
                sel = labels == lab
                if sel.any():
                    err, floor, pred = c["mean_error"][sel], c["mean_floor"][sel], c["predicted_error"][sel]
                    pr = rate(js, lab + (" x~" if dom == "dual" else ""), "mean")
                    for xi, xname in enumerate(("sweep_equivalents", "cpu_seconds")):
                        ax = axes[2 * gi, 2 * di + xi]
                        x = c[xname][sel]
                        ax.plot(x, err, color=color, lw=1.4, label=f"{scheme} (pred. -ln r/it = {pr:.3g})")
                        ax.plot(x, pred, color=color, lw=0.9, ls="--")
                        ax.plot(x, floor, color=color, lw=0.7, ls=":")
                if cov is not None:
                    _, cc, clab = cov
                    csel = np.array(clab) == lab
                    if csel.any():
                        for xi, xname in enumerate(("sweep_equivalents", "cpu_seconds")):
                            ax = axes[2 * gi + 1, 2 * di + xi]
                            x = cc[xname][csel]
                            ax.plot(x, np.abs(cc["cov_error"][csel]), color=color, lw=1.4, label=scheme)
                            ax.plot(x, cc["cov_floor"][csel], color=color, lw=0.7, ls=":")
            for row in (2 * gi, 2 * gi + 1):
                for xi, xlabel in enumerate(("sweep-equivalents (n site updates)",
                                             "CPU seconds (sampling, all chains)")):
                    ax = axes[row, 2 * di + xi]
                    ax.set_yscale("log")
                    ax.set_xscale("log")
                    if row == 2 * gi:
                        ax.set_ylim(1e-10, 2)
                        ax.set_ylabel(("||mean x|| " if dom == "primal" else "||mean x~|| ") + "/ start")
                    else:
                        ax.set_ylim(1e-3, 2)
                        ax.set_ylabel("|covariance error| of " + ("x" if dom == "primal" else "x~"))
                    if xi == 0:
                        ax.set_xlim(left=1)
                    else:
                        for xv, ls, text in lines:
                            ax.axvline(xv, color="k", lw=0.9, ls=ls, label=text)
                    ax.set_xlabel(xlabel)
                    ax.grid(alpha=0.3, ls=":")
                    what = "mean" if row == 2 * gi else "covariance"
                    ax.set_title(f"{graph} {dom}, {what}", fontsize=8)
                    ax.legend(fontsize=6)
    fig.suptitle(js.get("title", "accel") + "\nsolid: measured; dashed: predicted; dotted: Monte Carlo floor",
                 fontsize=9)
    fig.tight_layout()
    save(fig, out_dir, "accel")


def validate(d, js, out_dir):
    """dualgibbs validate: z-scores per coordinate at the last checkpoint (mean, variance, edges) against the
    verdict's threshold; with several checkpoints, the error of the marginal variances against sweep: Eb next to
    its Monte-Carlo floor Eb_floor (the value exact draws would give) and the unbiased Eu +-1 s.e."""
    _, c, _ = d
    k = len(c["checkpoint"]) - 1
    thr = c["z_threshold"][0]
    _, z, _ = read_csv(os.path.join(out_dir, f"validate_cp{k}.csv"))
    edges_path = os.path.join(out_dir, f"validate_cp{k}_edges.csv")
    many = len(c["checkpoint"]) > 1
    fig, axes = plt.subplots(1, 2 if many else 1, figsize=(12 if many else 7, 4.5), squeeze=False)
    ax = axes[0, 0]
    ax.plot(z["coordinate"], z["mean_z"], ".", ms=4, color=PRIMAL, label="mean z")
    ax.plot(z["coordinate"], z["variance_z"], ".", ms=4, color=DUAL, label="variance z")
    if os.path.exists(edges_path):
        _, e, _ = read_csv(edges_path)
        ax.plot(e["head"], e["edge_z"], ".", ms=3, color="#7f7f7f", alpha=0.5, label="edge z (at its head)")
    for s in (-1, 1):
        ax.axhline(s * thr, color="k", ls="--", lw=0.8)
    ax.set_xlabel("coordinate (node or edge id)")
    ax.set_ylabel(f"z (dashed: verdict threshold |z| = {thr:.2f})")
    sw = c["sweep"][k]
    ax.set_title(f"checkpoint {k}" + ("" if math.isnan(sw) else f" (sweep {sw:g})") +
                 f", global z = {c['global_z'][k]:.2f}", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, ls=":")
    if many:
        ax = axes[0, 1]
        x = c["sweep"] if np.all(np.isfinite(c["sweep"])) else c["checkpoint"]
        ax.plot(x, c["Eb"], color=PRIMAL, lw=1.6, label=r"$E_b$ (biased)")
        ax.plot(x, c["Eb_floor"], color="k", ls=":", lw=1.2, label=r"$E_b$ floor (exact draws' level)")
        ax.plot(x, c["Eu"], color=DUAL, lw=1.6, label=r"$E_u$ (unbiased) $\pm 1$ s.e.")
        ax.fill_between(x, c["Eu"] - c["Eu_se"], c["Eu"] + c["Eu_se"], color=DUAL, alpha=0.18, lw=0)
        symlog(ax, c["Eb"], c["Eu"], c["Eb_floor"])
        ax.set_xlabel("sweep" if np.all(np.isfinite(c["sweep"])) else "checkpoint")
        ax.set_ylabel("error of the marginal variances")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, ls=":")
    fig.suptitle(js.get("title", "validate"), fontsize=9)
    save(fig, out_dir, "validate")


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    name, out_dir = argv[1], argv[2]
    path = os.path.join(out_dir, f"{name}.csv")
    try:
        d = read_csv(path)
    except (OSError, ValueError) as exc:
        print(f"plot.py: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    js = read_json(os.path.join(out_dir, f"{name}.json"))
    handlers = {"fig5": fig5, "fig7": fig7, "fig8": fig8, "fig9": fig9, "fig10": fig10, "rates": rates,
                "validate": validate, "accuracy": accuracy, "accel": accel}
    if name in handlers:
        handlers[name](d, js, out_dir)
    elif "Eu_primal" in d[1]:
        convergence(d, js, name, out_dir, js.get("title", name))
    else:
        print(f"plot.py: no plot for {name} (columns {d[0][:6]}...)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
