#!/usr/bin/env python3
"""PyTorch reference of pacpfl's GP client model and its sparse-GP bound.

Run by hand (not part of `make test`) with Debian's python3-torch:

    /usr/bin/python3 bench/sparse_gp_torch.py check [--pacpfl bin/pacpfl]
    /usr/bin/python3 bench/sparse_gp_torch.py bench --m 100000 --inducing 512 \
        [--data FILE.csv [--client ID]] [--params PHI.txt] [--max-memory-gb 20]

The model is lml.Model in float64 with the same flat parameter vector phi
(Model.Layout: mean.W0, mean.b0, ..., kernel.W0, kernel.b0, ..., noise.s; each
W out x in, row-major; tanh hidden layers, linear outputs):

    mean m(x)        an MLP D -> hidden... -> 1
    kernel k(x, x')  exp(-1/2 |f(x) - f(x')|^2), f an MLP D -> hidden... -> DF
    noise sigma      softplus(s) + 1e-3

`bench` times the collapsed bound of Titsias (2009) for sparse GP regression
with M inducing inputs Z,

    F = ln N(y | m, Q + sigma^2 I) - tr(K - Q) / (2 sigma^2),  Q = K_fu K_uu^-1 K_uf,

in GPflow SGPR's numerically stable form with a dense M x m matrix K_uf
(A = L^-1 K_uf / sigma, B = I + A A^T, c = L_B^-1 A (y - m) / sigma), and its
gradient with respect to phi by autograd (Z held fixed, chosen as M distinct
rows of X at random). It reports the seconds of the bound and of bound plus
gradient (wall clock and the process's CPU time, the minimum of --reps runs
after a warm-up; on a shared machine CPU time / threads is the steadier
figure), the load average, and the peak resident set size of the process
(resource.getrusage's ru_maxrss). A failed allocation
(MemoryError, or torch's "can't allocate memory") is caught and reported with
the step it failed in. --max-memory-gb (default 20) sets RLIMIT_AS, so that a
size that does not fit fails there instead of pushing the machine into the
OOM killer.

`check` verifies the script itself: the exact LML (a Cholesky factor of
K + sigma^2 I) and its autograd gradient against central finite differences;
the bound with Z = X against the exact LML (equal up to K_uu's jitter, and to
rounding on a small problem that needs none); the bound with fewer inducing
inputs below it; and, given --pacpfl BIN, the exact LML, gradient and layout
against `pacpfl gp eval --params --json` on the same phi and data, which the
script writes (phi one number per line, the data as features then y), and the
sparse bound and its gradient against `gp eval --gp-inference sparse
--inducing m/4 --json` at the inducing inputs Z it reports.

Data: --data reads a CSV of `pacpfl data generate` (a client column, the
features, the target, a split column): the first m rows of --client (default:
the first client), train and test rows alike, standardised like Federate does
(mean and population std of those rows). Without --data: X uniform in
[-1, 1]^D, y = sin(3 sum(x)/sqrt(D)) + 0.1 noise. phi: --params (the format of
`pacpfl gp eval --params`), else drawn from pacpfl's default hyper-prior
N(mu_P, 0.5^2 I) (mu_P = 0 but softplus^-1(0.4) for s) with --seed.
"""

import argparse
import csv
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover
    sys.exit(f"sparse_gp_torch: {e}: install Debian's python3-torch (apt-get install python3-torch)")

torch.set_default_dtype(torch.float64)

MIN_NOISE_STD = 1e-3
JITTER_LADDER = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]  # lml.DefaultJitterLadder
LN_2PI = math.log(2 * math.pi)


class Model:
    """lml.Model: the layout of phi and the two networks."""

    def __init__(self, d, df=2, mean_hidden=(32, 32), kernel_hidden=(32, 32)):
        self.d, self.df = d, df
        self.mean_hidden, self.kernel_hidden = list(mean_hidden), list(kernel_hidden)
        self.blocks = []  # (name, shape, offset), Model.Layout
        off = 0
        for prefix, hidden, out in (("mean", self.mean_hidden, 1), ("kernel", self.kernel_hidden, df)):
            n_in = d
            for l, w in enumerate(hidden + [out]):
                self.blocks.append((f"{prefix}.W{l}", [w, n_in], off))
                off += w * n_in
                self.blocks.append((f"{prefix}.b{l}", [w], off))
                off += w
                n_in = w
        self.blocks.append(("noise.s", [1], off))
        self.num_params = off + 1

    def layers(self, phi, prefix):
        ws = {}
        for name, shape, off in self.blocks:
            if name.startswith(prefix + "."):
                size = math.prod(shape)
                ws[name[len(prefix) + 1:]] = phi[off:off + size].reshape(shape)
        n = len(ws) // 2
        return [(ws[f"W{l}"], ws[f"b{l}"]) for l in range(n)]

    @staticmethod
    def net(layers, x):
        h = x
        for l, (W, b) in enumerate(layers):
            h = torch.addmm(b, h, W.T)
            if l < len(layers) - 1:
                h = torch.tanh(h)
        return h

    def mean(self, phi, x):
        return self.net(self.layers(phi, "mean"), x)[:, 0]

    def features(self, phi, x):
        return self.net(self.layers(phi, "kernel"), x)

    def noise_std(self, phi):
        return torch.nn.functional.softplus(phi[-1]) + MIN_NOISE_STD

    def prior_mean(self):
        mu = np.zeros(self.num_params)
        mu[-1] = math.log(math.expm1(0.4))
        return mu


def se_kernel(a, b):
    """exp(-1/2 |a_i - b_j|^2) for the rows of a and b, by GPflow's expansion
    |a|^2 + |b|^2 - 2 a.b folded into one GEMM and one exp:
    exp(min(a.b - |a|^2/2 - |b|^2/2, 0))."""
    h = torch.addmm(-0.5 * (a * a).sum(1)[:, None] - 0.5 * (b * b).sum(1)[None, :], a, b.T)
    return torch.exp(h.clamp_max(0))


def cholesky_ladder(K, ladder=JITTER_LADDER):
    """Cholesky factor of K as lml's factorKuu takes it: as is, unless it
    fails or a pivot L_jj^2 falls below 1e-6 mean(diag K); then with
    eps * mean(diag K) added to the diagonal for eps on the ladder (the
    jitter a constant). Returns (L, jitter)."""
    mean = K.diagonal().mean().detach()
    L, info = torch.linalg.cholesky_ex(K)
    if info.item() == 0 and (not ladder or (L.diagonal().detach() ** 2).min() >= ladder[0] * mean):
        return L, 0.0
    eye = torch.eye(K.shape[0])
    jit = 0.0
    for eps in ladder:
        jit = float(eps * mean)
        L, info = torch.linalg.cholesky_ex(K + jit * eye)
        if info.item() == 0:
            return L, jit
    raise RuntimeError(f"K ({K.shape[0]}x{K.shape[0]}) is not positive definite even with jitter {jit:g}")


def exact_lml(model, phi, X, y):
    """ln N(y | m(X), K + sigma^2 I), lml.Workspace.LML (Cholesky; the
    jitter ladder only if the factorization fails)."""
    m = X.shape[0]
    r = y - model.mean(phi, X)
    f = model.features(phi, X)
    s2 = model.noise_std(phi) ** 2
    A = se_kernel(f, f) + s2 * torch.eye(m)
    L, info = torch.linalg.cholesky_ex(A)
    jitter = 0.0
    if info.item() != 0:
        mean = A.diagonal().mean().detach()
        for eps in JITTER_LADDER:
            jitter = float(eps * mean)
            L, info = torch.linalg.cholesky_ex(A + jitter * torch.eye(m))
            if info.item() == 0:
                break
        else:
            raise RuntimeError("K + sigma^2 I is not positive definite even with jitter")
    v = torch.cholesky_solve(r[:, None], L)[:, 0]
    return -0.5 * (r @ v) - torch.log(L.diagonal()).sum() - 0.5 * m * LN_2PI, jitter


class Steps:
    """Names the step a computation is in, for the report of a failure."""

    def __init__(self):
        self.name = "start"

    def __call__(self, name):
        self.name = name


def sgpr_bound(model, phi, X, y, Z, step=None, ladder=JITTER_LADDER):
    """The Titsias bound, GPflow SGPR.elbo's stable form with a dense K_uf.
    Returns (F, jitter of K_uu); ladder=[]: no jitter."""
    step = step or Steps()
    m, M = X.shape[0], Z.shape[0]
    step("networks on X and Z")
    r = y - model.mean(phi, X)
    fx = model.features(phi, X)
    fz = model.features(phi, Z)
    sigma = model.noise_std(phi)
    s2 = sigma * sigma
    step("K_uu and its Cholesky factor")
    L, jitter = cholesky_ladder(se_kernel(fz, fz), ladder)
    step(f"K_uf, dense {M} x {m}")
    Kuf = se_kernel(fz, fx)
    step(f"A = L^-1 K_uf / sigma, dense {M} x {m}")
    A = torch.linalg.solve_triangular(L, Kuf, upper=False) / sigma
    step("A A^T and B = I + A A^T")
    AAT = A @ A.T
    B = AAT + torch.eye(M)
    LB = torch.linalg.cholesky(B)
    step("c = L_B^-1 A r / sigma")
    c = torch.linalg.solve_triangular(LB, (A @ r)[:, None], upper=False)[:, 0] / sigma
    # tr K = m: the kernel has a unit diagonal.
    F = (-0.5 * m * LN_2PI - torch.log(LB.diagonal()).sum() - 0.5 * m * torch.log(s2)
         - 0.5 * (r @ r) / s2 + 0.5 * (c @ c) - 0.5 * m / s2 + 0.5 * AAT.diagonal().sum())
    return F, jitter


def value_and_grad(fn, phi0):
    phi = phi0.clone().requires_grad_(True)
    v, jitter = fn(phi)
    (g,) = torch.autograd.grad(v, phi)
    return v.item(), g, jitter


# ---------------------------------------------------------------- data, phi


def read_params(path):
    vals = []
    with open(path) as f:
        for line in f:
            t = line.strip().lstrip("\ufeff")
            if t and not t.startswith("#"):
                vals.append(float(t))
    return np.array(vals)


def write_params(path, phi):
    with open(path, "w") as f:
        for v in phi:
            f.write(repr(float(v)) + "\n")


def read_generated(path, m, client, target):
    """The first m rows of one client of a `pacpfl data generate` CSV."""
    with open(path, newline="") as f:
        rd = csv.reader(f)
        header = next(rd)
        if "client" not in header or "split" not in header:
            sys.exit(f"{path}: not a file of `pacpfl data generate` (no client and split columns): {header}")
        if target is None:
            target = "y" if "y" in header else "power"
        ci, si, ti = header.index("client"), header.index("split"), header.index(target)
        feats = [j for j in range(len(header)) if j not in (ci, si, ti)]
        X = np.empty((m, len(feats)))
        y = np.empty(m)
        n = 0
        for row in rd:
            if client is None:
                client = row[ci]
            if row[ci] != client:
                if n:
                    break
                continue
            X[n] = [float(row[j]) for j in feats]
            y[n] = float(row[ti])
            n += 1
            if n == m:
                break
    if n < m:
        sys.exit(f"{path}: client {client} has {n} rows, fewer than --m {m}")
    sx = X.std(0)
    sx[sx == 0] = 1
    X = (X - X.mean(0)) / sx
    y = (y - y.mean()) / (y.std() or 1)
    return X, y, [header[j] for j in feats], client


def random_data(m, d, rng):
    X = rng.uniform(-1, 1, size=(m, d))
    y = np.sin(3 * X.sum(1) / math.sqrt(d)) + 0.1 * rng.standard_normal(m)
    return X, y


def make_phi(args, model, rng):
    if args.params:
        phi = read_params(args.params)
        if len(phi) != model.num_params:
            sys.exit(f"{args.params}: {len(phi)} parameters; the model has {model.num_params}")
        return phi
    return model.prior_mean() + args.sigma_p * rng.standard_normal(model.num_params)


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


# ---------------------------------------------------------------- commands


def cmd_check(args):
    rng = np.random.default_rng(args.seed)
    if args.data:
        X, y, _, _ = read_generated(args.data, args.m, args.client, args.target)
    else:
        X, y = random_data(args.m, args.d, rng)
    model = Model(X.shape[1], args.df, args.hidden, args.hidden)
    phi0 = torch.tensor(make_phi(args, model, rng))
    Xt, yt = torch.tensor(X), torch.tensor(y)
    ok = True

    def report(what, good, detail):
        nonlocal ok
        ok = ok and good
        print(f"{'ok  ' if good else 'FAIL'} {what}: {detail}")

    lml, g, jit = value_and_grad(lambda p: exact_lml(model, p, Xt, yt), phi0)
    print(f"exact LML {lml:.12g} (m={args.m}, D={X.shape[1]}, dphi={model.num_params}, jitter {jit:g}, |grad| {g.norm():.6g})")

    # Autograd against central differences on a few coordinates.
    idx = rng.choice(model.num_params, size=min(8, model.num_params), replace=False)
    idx[-1] = model.num_params - 1  # the noise
    worst = 0.0
    for i in idx:
        h = 1e-5
        e = torch.zeros(model.num_params)
        e[i] = h
        fd = (exact_lml(model, phi0 + e, Xt, yt)[0] - exact_lml(model, phi0 - e, Xt, yt)[0]).item() / (2 * h)
        worst = max(worst, abs(fd - g[i].item()) / max(1.0, abs(fd)))
    report("exact gradient against central differences", worst < 1e-5, f"worst relative error {worst:.2e} over {len(idx)} coordinates")

    # The bound with Z = X is the exact LML (Q = K) up to K_uu's jitter.
    F, gF, jitF = value_and_grad(lambda p: sgpr_bound(model, p, Xt, yt, Xt), phi0)
    rel = abs(F - lml) / abs(lml)
    report("bound with Z = X equals the exact LML", F <= lml + 1e-8 * abs(lml) and rel < (1e-9 if jitF == 0 else 1e-3),
           f"F {F:.12g}, relative difference {rel:.2e}, K_uu jitter {jitF:g}, gradient difference {((gF - g).norm() / g.norm()).item():.2e} relative")
    # Without jitter the bound at Z = X is the exact LML to rounding: on a
    # problem whose K is positive definite in float64 (the first 50 rows, a
    # phi of hyper-prior std 1, which spreads the kernel features).
    m0 = min(50, args.m)
    X0, y0 = Xt[:m0], yt[:m0]
    phi1 = torch.tensor(model.prior_mean() + rng.standard_normal(model.num_params))
    try:
        l0, g0, _ = value_and_grad(lambda p: exact_lml(model, p, X0, y0), phi1)
        F0, gF0, _ = value_and_grad(lambda p: sgpr_bound(model, p, X0, y0, X0, ladder=[]), phi1)
        rel0 = abs(F0 - l0) / abs(l0)
        report(f"bound with Z = X and no jitter equals the exact LML (m = {m0}, sigma_P = 1)", rel0 < 1e-9,
               f"F {F0:.12g}, LML {l0:.12g}, relative difference {rel0:.1e}, gradient {((gF0 - g0).norm() / g0.norm()).item():.1e} relative")
    except RuntimeError as e:
        report(f"bound with Z = X and no jitter (m = {m0}, sigma_P = 1)", False, str(e))
    # Fewer inducing inputs: still a lower bound.
    for M in (max(1, args.m // 16), max(2, args.m // 4), args.m // 2):
        Z = Xt[torch.tensor(rng.choice(args.m, size=M, replace=False))]
        FM, _ = sgpr_bound(model, phi0, Xt, yt, Z)
        report(f"bound with M = {M} below the exact LML", FM.item() <= lml + 1e-8 * abs(lml), f"F {FM.item():.10g} (LML {lml:.10g})")

    if args.pacpfl:
        with tempfile.TemporaryDirectory() as tmp:
            pf, df = os.path.join(tmp, "phi.txt"), os.path.join(tmp, "data.csv")
            write_params(pf, phi0.numpy())
            with open(df, "w") as f:
                for xr, yr in zip(X, y):
                    f.write(",".join(repr(float(v)) for v in xr) + "," + repr(float(yr)) + "\n")
            hidden = ",".join(map(str, args.hidden)) or "none"
            cmd = [args.pacpfl, "gp", "eval", "--data", df, "--params", pf, "--hidden", hidden, "--df", str(args.df), "--json"]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                report("pacpfl gp eval", False, res.stderr.strip())
            else:
                go = json.loads(res.stdout)
                layout = [(b["name"], b["shape"], b["offset"]) for b in go["layout"]]
                report("layout of phi equals lml.Model.Layout", layout == model.blocks, f"{len(layout)} blocks, dphi {go['num_params']}")
                rel = abs(go["lml"] - lml) / abs(lml)
                report("exact LML equals pacpfl gp eval's", rel < 1e-10, f"Go {go['lml']:.15g}, torch {lml:.15g}, relative {rel:.1e} (Go jitter {go['jitter']:g})")
                gg = torch.tensor(go["grad"])
                relg = ((gg - g).norm() / g.norm()).item()
                report("gradient equals pacpfl gp eval's", relg < 1e-8, f"relative L2 difference {relg:.1e}")
            # The sparse bound at the inducing inputs Go chose (k-means++).
            M = max(1, args.m // 4)
            res = subprocess.run(cmd + ["--gp-inference", "sparse", "--inducing", str(M)], capture_output=True, text=True)
            if res.returncode != 0:
                report("pacpfl gp eval --gp-inference sparse", False, res.stderr.strip())
            else:
                go = json.loads(res.stdout)
                Z = torch.tensor(go["inducing_inputs"])
                F, gF, jitF = value_and_grad(lambda p: sgpr_bound(model, p, Xt, yt, Z), phi0)
                rel = abs(go["lml"] - F) / abs(F)
                relg = ((torch.tensor(go["grad"]) - gF).norm() / gF.norm()).item()
                report(f"sparse bound (M = {M}) equals pacpfl gp eval --gp-inference sparse's",
                       rel < 1e-10 and relg < 1e-8 and go["jitter"] == jitF,
                       f"Go {go['lml']:.15g}, torch {F:.15g}, relative {rel:.1e}; gradient {relg:.1e}; K_uu jitter Go {go['jitter']:g}, torch {jitF:g}")
    print("check: all ok" if ok else "check: FAILED")
    return 0 if ok else 1


def cmd_bench(args):
    if args.max_memory_gb > 0:
        lim = int(args.max_memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    torch.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    where = "random data"
    if args.data:
        X, y, names, client = read_generated(args.data, args.m, args.client, args.target)
        where = f"{args.data}, client {client}, features {','.join(names)}"
    else:
        X, y = random_data(args.m, args.d, rng)
    t_data = time.perf_counter() - t0
    model = Model(X.shape[1], args.df, args.hidden, args.hidden)
    phi0 = torch.tensor(make_phi(args, model, rng))
    Xt, yt = torch.tensor(X), torch.tensor(y)
    del X, y
    Z = Xt[torch.tensor(rng.choice(args.m, size=args.inducing, replace=False))].clone()
    res = {
        "m": args.m, "inducing": args.inducing, "d": Xt.shape[1], "dphi": model.num_params,
        "threads": torch.get_num_threads(), "torch": torch.__version__, "cpu": cpu_name(),
        "data": where, "data_seconds": round(t_data, 3),
        "rlimit_as_gib": args.max_memory_gb or None, "loadavg_start": [round(v, 2) for v in os.getloadavg()],
    }
    print(f"torch {torch.__version__} float64, {torch.get_num_threads()} threads on {cpu_name()} "
          f"(load average {os.getloadavg()[0]:.1f}); m = {args.m}, M = {args.inducing}, D = {Xt.shape[1]}, "
          f"dphi = {model.num_params}; {where}", flush=True)
    step = Steps()
    phase = "bound"
    try:
        times, gtimes, cpus, gcpus = [], [], [], []
        for rep in range(args.reps + 1):  # the first is a warm-up
            phase = "bound"
            t, c = time.perf_counter(), time.process_time()
            with torch.no_grad():
                F, jitter = sgpr_bound(model, phi0, Xt, yt, Z, step)
            times.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
            phase = "bound + gradient"
            phi = phi0.clone().requires_grad_(True)
            t, c = time.perf_counter(), time.process_time()
            Fg, _ = sgpr_bound(model, phi, Xt, yt, Z, step)
            step("backward (autograd)")
            (g,) = torch.autograd.grad(Fg, phi)
            gtimes.append(time.perf_counter() - t)
            gcpus.append(time.process_time() - c)
            del Fg
            print(f"  run {rep}{' (warm-up)' if rep == 0 else ''}: bound {times[-1]:.3f} s (CPU {cpus[-1]:.3f} s), "
                  f"bound + gradient {gtimes[-1]:.3f} s (CPU {gcpus[-1]:.3f} s), peak RSS {peak_rss_bytes() / 2**30:.2f} GiB", flush=True)
            if args.reps == 0:
                break
        keep = slice(1, None) if args.reps > 0 else slice(0, None)
        res.update(ok=True, bound=F.item(), kuu_jitter=jitter, grad_norm=g.norm().item(),
                   bound_seconds=min(times[keep]), bound_grad_seconds=min(gtimes[keep]),
                   bound_cpu_seconds=min(cpus[keep]), bound_grad_cpu_seconds=min(gcpus[keep]))
    except (MemoryError, RuntimeError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if isinstance(e, RuntimeError) and "alloc" not in msg.lower() and "memory" not in msg.lower():
            raise
        res.update(ok=False, failed_in=f"{phase}: {step.name}", error=f"{type(e).__name__}: {msg}")
    res["loadavg_end"] = [round(v, 2) for v in os.getloadavg()]
    res["peak_rss_bytes"] = peak_rss_bytes()
    res["peak_rss_gib"] = round(res["peak_rss_bytes"] / 2**30, 3)
    if res["ok"]:
        print(f"bound {res['bound']:.10g} (K_uu jitter {res['kuu_jitter']:g}); min of {max(1, args.reps)}: "
              f"bound {res['bound_seconds']:.3f} s (CPU {res['bound_cpu_seconds']:.3f} s), "
              f"bound + gradient {res['bound_grad_seconds']:.3f} s (CPU {res['bound_grad_cpu_seconds']:.3f} s); "
              f"peak RSS {res['peak_rss_gib']:.2f} GiB")
    else:
        print(f"FAILED in {res['failed_in']}: {res['error']}; peak RSS {res['peak_rss_gib']:.2f} GiB"
              + (f" (address space limited to {args.max_memory_gb:g} GiB)" if args.max_memory_gb else ""))
    if args.json:
        print(json.dumps(res))
    return 0 if res["ok"] else 3


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(q, m):
        q.add_argument("--m", type=int, default=m, help=f"data rows (default {m})")
        q.add_argument("--d", type=int, default=3, help="inputs of random data (default 3)")
        q.add_argument("--data", help="CSV of `pacpfl data generate` (default: random data)")
        q.add_argument("--client", help="the client of --data (default: the first)")
        q.add_argument("--target", help="target column of --data (default: y, else power)")
        q.add_argument("--params", help="phi, one number per line (`pacpfl gp eval --params`); default: a hyper-prior draw")
        q.add_argument("--sigma-p", type=float, default=0.5, help="hyper-prior std of the drawn phi (default 0.5)")
        q.add_argument("--hidden", type=lambda s: [int(v) for v in s.split(",")] if s not in ("", "none") else [],
                       default=[32, 32], help="hidden widths of both networks (default 32,32)")
        q.add_argument("--df", type=int, default=2, help="kernel feature dimension (default 2)")
        q.add_argument("--seed", type=int, default=1, help="seed of data, phi and Z (default 1)")

    c = sub.add_parser("check", help="check the script: exact LML, gradient, bound at Z = X, against pacpfl gp eval")
    common(c, 200)
    c.add_argument("--pacpfl", help="a pacpfl binary: compare with `pacpfl gp eval --json`")
    b = sub.add_parser("bench", help="time the bound and its gradient")
    common(b, 10000)
    b.add_argument("--inducing", type=int, default=512, help="inducing inputs M (default 512)")
    b.add_argument("--reps", type=int, default=2, help="timed runs after a warm-up (default 2; 0: one run, no warm-up)")
    b.add_argument("--threads", type=int, default=0, help="torch threads (default: every CPU this process may run on)")
    b.add_argument("--max-memory-gb", type=float, default=20, help="RLIMIT_AS in GiB (default 20; 0: none)")
    b.add_argument("--json", action="store_true", help="also print the result as one JSON line")
    args = p.parse_args(argv)
    if args.m < 2 or (args.cmd == "bench" and not (1 <= args.inducing <= args.m)):
        p.error("want m >= 2 and 1 <= --inducing <= m")
    return cmd_check(args) if args.cmd == "check" else cmd_bench(args)


if __name__ == "__main__":
    sys.exit(main())
