#!/usr/bin/env python3
"""Fits and checks the global parameters of Tessera's profile synthesizer.

The synthesizer (src/profile/profile_synth.cc, docs/profile-synthesizer.md)
predicts segment throughput and latency of a DNN model on a MIG profile from
the model's card and a handful of global parameters. This tool:

  cards  derives the card figures (GFLOPs, parameters, weighted layers,
         activation MiB per sample) by walking each architecture, layer by
         layer, so the numbers in src/profile/model_cards.cc are reproducible;
  fit    fits the 8 global parameters against ParvaGPU's A100-80GB
         measurements (memory parameters first, by feasibility agreement, then
         the 6 performance parameters by Nelder-Mead on a robust log error);
  eval   prints the errors of the parameters shipped in profile_synth.cc.

Pure python3 standard library. It READS the measured data at run time from
../shared/data/parvagpu/prof_data (or --data DIR) and writes nothing: every
result goes to stdout. Never copy the measured data into the repository.

Usage: python3 tools/fit_synth.py [cards|fit|eval] [--data DIR]
"""
import argparse
import csv
import math
import os
import sys

# ----------------------------------------------------------------------------
# Architecture walkers. Each tracks the (channels, height, width) of the
# running tensor and accumulates multiply-accumulates, parameters, weighted
# layers (conv + linear) and activation elements: the sum of every tensor the
# forward pass allocates (conv, BatchNorm, pooling, concatenation, non-in-place
# add, linear outputs), which is what PyTorch's autograd keeps alive when the
# forward pass runs without torch.no_grad (ReLUs of torchvision are in place).
# ----------------------------------------------------------------------------


class Net:
    def __init__(self, c, h, w):
        self.c, self.h, self.w = c, h, w
        self.macs = 0
        self.params = 0
        self.layers = 0
        self.act = c * h * w  # the input batch lives on the GPU too
        self.peak = 0  # peak live elements, for models run under torch.no_grad

    def out(self, c, h, w):
        self.act += c * h * w

    def conv(self, cout, k, s=1, p=None, kw=None, bias=False, groups=1, bn=True, x=None):
        c, h, w = x if x else (self.c, self.h, self.w)
        kh, kw = k, (kw if kw is not None else k)
        if p is None:
            ph, pw = kh // 2, kw // 2
        elif isinstance(p, tuple):
            ph, pw = p
        else:
            ph = pw = p
        ho, wo = (h + 2 * ph - kh) // s + 1, (w + 2 * pw - kw) // s + 1
        self.macs += ho * wo * cout * (c // groups) * kh * kw
        self.params += cout * (c // groups) * kh * kw + (cout if bias else 0)
        self.layers += 1
        self.out(cout, ho, wo)
        if bn:
            self.params += 2 * cout
            self.out(cout, ho, wo)
        self.c, self.h, self.w = cout, ho, wo
        return (cout, ho, wo)

    def pool(self, k, s, p=0, x=None):
        c, h, w = x if x else (self.c, self.h, self.w)
        ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        self.out(c, ho, wo)
        self.c, self.h, self.w = c, ho, wo
        return (c, ho, wo)

    def linear(self, nin, nout, tokens=1):
        self.macs += nin * nout * tokens
        self.params += nin * nout + nout
        self.layers += 1
        self.out(nout, tokens, 1)


def resnet(blocks):
    """torchvision ResNet v1.5 (stride on the 3x3), bottleneck blocks."""
    n = Net(3, 224, 224)
    n.conv(64, 7, 2, 3)
    n.pool(3, 2, 1)
    for stage, (nb, width) in enumerate(zip(blocks, [64, 128, 256, 512])):
        for b in range(nb):
            s = 2 if (b == 0 and stage > 0) else 1
            x = (n.c, n.h, n.w)
            n.conv(width, 1)
            n.conv(width, 3, s)
            y = n.conv(width * 4, 1)
            if b == 0:
                n.conv(width * 4, 1, s, 0, x=x)  # downsample
            n.c, n.h, n.w = y  # out += identity is in place
    n.pool(n.h, 1)
    n.linear(2048, 1000)
    return n


def vgg(cfg):
    """torchvision VGG without BatchNorm; ReLU(inplace=True)."""
    n = Net(3, 224, 224)
    for v in cfg:
        if v == 'M':
            n.pool(2, 2)
        else:
            n.conv(v, 3, 1, 1, bias=True, bn=False)
    n.out(512, 7, 7)  # AdaptiveAvgPool2d((7, 7)) still allocates
    n.linear(25088, 4096)
    n.linear(4096, 4096)
    n.linear(4096, 1000)
    return n


def densenet(blocks, growth=32, init=64, bn_size=4):
    """torchvision DenseNet, memory_efficient=False: each layer concatenates."""
    n = Net(3, 224, 224)
    n.conv(init, 7, 2, 3)
    n.pool(3, 2, 1)
    c = init
    for i, nl in enumerate(blocks):
        for l in range(nl):
            cin = c + l * growth
            n.out(cin, n.h, n.w)  # torch.cat(prev_features)
            n.params += 2 * cin
            n.out(cin, n.h, n.w)  # norm1 (relu1 in place)
            n.conv(bn_size * growth, 1, 1, 0, x=(cin, n.h, n.w))  # conv1 + norm2
            n.conv(growth, 3, 1, 1, bn=False)  # conv2
        c += nl * growth
        n.out(c, n.h, n.w)  # the block's output concatenation
        if i != len(blocks) - 1:
            n.params += 2 * c
            n.out(c, n.h, n.w)  # transition norm
            n.conv(c // 2, 1, 1, 0, bn=False, x=(c, n.h, n.w))
            n.pool(2, 2)
            c //= 2
    n.params += 2 * c
    n.out(c, n.h, n.w)  # norm5 (F.relu in place)
    n.out(c, 1, 1)
    n.linear(c, 1000)
    return n


def mobilenetv2():
    """torchvision MobileNetV2 (width 1.0); ReLU6 in place, residual add allocates."""
    n = Net(3, 224, 224)
    n.conv(32, 3, 2, 1)
    cin = 32
    for t, c, reps, s in [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
                          [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]:
        for i in range(reps):
            stride = s if i == 0 else 1
            hid = cin * t
            if t != 1:
                n.conv(hid, 1, 1, 0)
            n.conv(hid, 3, stride, 1, groups=hid)
            n.conv(c, 1, 1, 0)
            if stride == 1 and cin == c:
                n.out(c, n.h, n.w)  # x + conv(x)
            cin = c
    n.conv(1280, 1, 1, 0)
    n.out(1280, 1, 1)
    n.linear(1280, 1000)
    return n


def inceptionv3(size):
    """torchvision Inception v3 in eval mode (no auxiliary head), input size^2."""
    n = Net(3, size, size)
    n.act += 3 * 3 * size * size  # transform_input: mul and add per channel, then cat

    def b(cout, k, s=1, p=0, kw=None, x=None):
        return n.conv(cout, k, s, p, kw, x=x)

    def cat(parts):
        c = sum(p[0] for p in parts)
        n.out(c, parts[0][1], parts[0][2])
        n.c, n.h, n.w = c, parts[0][1], parts[0][2]

    def block_a(pf):
        x = (n.c, n.h, n.w)
        p1 = b(64, 1, x=x)
        b(48, 1, x=x)
        p2 = b(64, 5, 1, 2)
        b(64, 1, x=x)
        b(96, 3, 1, 1)
        p3 = b(96, 3, 1, 1)
        n.pool(3, 1, 1, x=x)
        p4 = b(pf, 1)
        cat([p1, p2, p3, p4])

    def block_b():
        x = (n.c, n.h, n.w)
        p1 = b(384, 3, 2, x=x)
        b(64, 1, x=x)
        b(96, 3, 1, 1)
        p2 = b(96, 3, 2)
        p3 = n.pool(3, 2, x=x)
        cat([p1, p2, p3])

    def block_c(c7):
        x = (n.c, n.h, n.w)
        p1 = b(192, 1, x=x)
        b(c7, 1, x=x)
        b(c7, 1, 1, (0, 3), 7)
        p2 = b(192, 7, 1, (3, 0), 1)
        b(c7, 1, x=x)
        b(c7, 7, 1, (3, 0), 1)
        b(c7, 1, 1, (0, 3), 7)
        b(c7, 7, 1, (3, 0), 1)
        p3 = b(192, 1, 1, (0, 3), 7)
        n.pool(3, 1, 1, x=x)
        p4 = b(192, 1)
        cat([p1, p2, p3, p4])

    def block_d():
        x = (n.c, n.h, n.w)
        b(192, 1, x=x)
        p1 = b(320, 3, 2)
        b(192, 1, x=x)
        b(192, 1, 1, (0, 3), 7)
        b(192, 7, 1, (3, 0), 1)
        p2 = b(192, 3, 2)
        p3 = n.pool(3, 2, x=x)
        cat([p1, p2, p3])

    def block_e():
        x = (n.c, n.h, n.w)
        p1 = b(320, 1, x=x)
        y = b(384, 1, x=x)
        b(384, 1, 1, (0, 1), 3, x=y)
        b(384, 3, 1, (1, 0), 1, x=y)
        n.out(768, y[1], y[2])
        z = b(448, 1, x=x)
        z = b(384, 3, 1, 1, x=z)
        b(384, 1, 1, (0, 1), 3, x=z)
        b(384, 3, 1, (1, 0), 1, x=z)
        n.out(768, z[1], z[2])
        n.pool(3, 1, 1, x=x)
        p4 = b(192, 1)
        cat([p1, (768, y[1], y[2]), (768, z[1], z[2]), p4])

    b(32, 3, 2)
    b(32, 3)
    b(64, 3, 1, 1)
    n.pool(3, 2)
    b(80, 1)
    b(192, 3)
    n.pool(3, 2)
    for pf in (32, 64, 64):
        block_a(pf)
    block_b()
    for c7 in (128, 160, 160, 192):
        block_c(c7)
    block_d()
    block_e()
    block_e()
    n.out(2048, 1, 1)
    n.linear(2048, 1000)
    return n


def bert_large(seq=128, hidden=1024, heads=16, ffn=4096, layers=24, vocab=30522):
    """BERT-large encoder at sequence length `seq`, run under torch.no_grad."""
    n = Net(1, seq, 1)
    n.params += (vocab + 512 + 2) * hidden + 2 * hidden  # embeddings + LayerNorm
    for _ in range(layers):
        for _ in range(4):
            n.linear(hidden, hidden, seq)  # Q, K, V, attention output
        n.macs += 2 * seq * seq * hidden  # Q K^T and softmax x V
        n.linear(hidden, ffn, seq)
        n.linear(ffn, hidden, seq)
        n.params += 4 * hidden  # two LayerNorms
    n.linear(hidden, hidden)  # pooler
    n.linear(hidden, 2)  # QA / classification head
    # Under no_grad nothing is retained: the peak live set of one layer is the
    # FFN intermediate before and after GELU, two hidden states and two
    # attention maps (scores and softmax).
    n.peak = 2 * ffn * seq + 2 * hidden * seq + 2 * heads * seq * seq
    return n


VGG16 = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 'M', 512, 512, 512, 'M',
         512, 512, 512, 'M']
VGG19 = [64, 64, 'M', 128, 128, 'M', 256, 256, 256, 256, 'M', 512, 512, 512, 512, 'M',
         512, 512, 512, 512, 'M']
NETS = {
    'bert-large': bert_large,
    'densenet121': lambda: densenet((6, 12, 24, 16)),
    'densenet169': lambda: densenet((6, 12, 32, 32)),
    'densenet201': lambda: densenet((6, 12, 48, 32)),
    # ParvaGPU's data fits a 224x224 input (see docs/profile-synthesizer.md).
    'inceptionv3': lambda: inceptionv3(224),
    'mobilenetv2': mobilenetv2,
    'resnet50': lambda: resnet((3, 4, 6, 3)),
    'resnet101': lambda: resnet((3, 4, 23, 3)),
    'resnet152': lambda: resnet((3, 8, 36, 3)),
    'vgg16': lambda: vgg(VGG16),
    'vgg19': lambda: vgg(VGG19),
}
# ParvaGPU Table IV parameter counts (millions): the card uses these.
TABLE_IV_PARAMS = {
    'bert-large': 330, 'densenet121': 8.0, 'densenet169': 14.1, 'densenet201': 20.0,
    'inceptionv3': 27.2, 'mobilenetv2': 3.5, 'resnet101': 44.5, 'resnet152': 60.2,
    'resnet50': 25.6, 'vgg16': 138.4, 'vgg19': 143.7,
}


def sig3(x):
    """Rounds to 3 significant digits, as the C++ cards store the figures."""
    return float('%.3g' % x)


def cards():
    """Card figures as the C++ cards store them."""
    out = {}
    for name, build in NETS.items():
        n = build()
        elems = n.peak if n.peak else n.act
        out[name] = dict(gflops=sig3(2 * n.macs / 1e9), params=TABLE_IV_PARAMS[name],
                         walker_params=n.params / 1e6, layers=n.layers,
                         act=sig3(elems * 4 / 2**20))
    return out


# ----------------------------------------------------------------------------
# The model: keep in sync with src/profile/profile_synth.cc.
# ----------------------------------------------------------------------------

# A100-80GB as in src/gpu/gpu_catalog.cc.
GPU = dict(sms=98, memory_slices=8, bandwidth_gbs=2039.0, fp16_tflops=312.0)
# compute size -> (SMs, memory slices, GiB) of its primary profile.
PROFILES = {1: (14, 1, 9.50), 2: (28, 2, 19.50), 3: (42, 4, 39.25), 4: (56, 4, 39.25),
            7: (98, 8, 79.00)}
PERF = ['host_ms_per_layer', 'kernel_ms_per_layer', 'compute_efficiency',
        'traffic_per_activation_byte', 'mps_fixed_serial_share', 'smooth_max_exponent']
MEMORY = ['context_gib', 'activation_memory_factor']
# The values shipped in profile_synth.cc (SynthParams defaults).
SHIPPED = dict(host_ms_per_layer=0.099, kernel_ms_per_layer=0.029, compute_efficiency=0.234,
               traffic_per_activation_byte=4.89, mps_fixed_serial_share=0.188,
               smooth_max_exponent=16.0, context_gib=0.66, activation_memory_factor=2.0)


def fits_in_memory(card, gib, batch, procs, p):
    weights = card['params'] * 1e6 * 4 / 2**30
    per_proc = p['context_gib'] + weights + p['activation_memory_factor'] * batch * card['act'] / 1024
    return procs * per_proc <= gib


def smooth_max(xs, n):
    m = max(xs)
    return m * sum((x / m) ** n for x in xs) ** (1.0 / n)


def predict(card, g, batch, procs, p):
    """(segment throughput rps, latency ms), or None when out of memory."""
    sms, mem_slices, gib = PROFILES[g]
    if not fits_in_memory(card, gib, batch, procs, p):
        return None
    tflops = p['compute_efficiency'] * GPU['fp16_tflops'] * sms / GPU['sms']
    bandwidth = GPU['bandwidth_gbs'] * mem_slices / GPU['memory_slices']
    # ms per sample: GFLOP / TFLOPS = ms; MiB / (GB/s) = 1.048576 ms.
    per_sample = card['gflops'] / tflops + (
        p['traffic_per_activation_byte'] * card['act'] * 1.048576 / bandwidth)
    host = p['host_ms_per_layer'] * card['layers']
    fixed = p['kernel_ms_per_layer'] * card['layers']
    one = fixed + batch * per_sample
    shared = fixed * (1 + p['mps_fixed_serial_share'] * (procs - 1)) + procs * batch * per_sample
    latency = smooth_max([host, one, shared], p['smooth_max_exponent'])
    return procs * batch * 1000.0 / latency, latency


# ----------------------------------------------------------------------------
# Data, errors, fitting.
# ----------------------------------------------------------------------------


def load(data_dir):
    rows = []
    for f in sorted(os.listdir(data_dir)):
        if not f.endswith('.csv'):
            continue
        model = 'bert-large' if f == 'bert.csv' else f[:-4]
        with open(os.path.join(data_dir, f), newline='') as fh:
            for r in list(csv.reader(fh))[1:]:
                g, b, procs, tp, lat = int(r[0]), int(r[1]), int(r[2]), float(r[3]), float(r[4])
                rows.append((model, g, b, procs, tp * procs, lat * 1000.0))
    return rows


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def errors(rows, cc, p):
    """Per-row relative errors over measured-feasible rows (infeasible = 1.0)."""
    tp_err, lat_err, per_model, agree = [], [], {}, 0
    for model, g, b, procs, tp, lat in rows:
        if tp <= 0:
            continue
        r = predict(cc[model], g, b, procs, p)
        e = 1.0 if r is None else abs(r[0] - tp) / tp
        if r is not None:
            agree += 1
            lat_err.append(abs(r[1] - lat) / lat)
        tp_err.append(e)
        per_model.setdefault(model, []).append(e)
    return tp_err, lat_err, per_model, agree


def fit_memory(rows, cc):
    """Grid search: fewest feasibility disagreements in either direction."""
    best = None
    for ci in range(0, 201):
        for gi in range(50, 401):
            p = dict(context_gib=ci * 0.01, activation_memory_factor=gi * 0.01)
            bad = sum(1 for m, g, b, procs, tp, _ in rows
                      if fits_in_memory(cc[m], PROFILES[g][2], b, procs, p) != (tp > 0))
            if best is None or bad < best[0]:
                best = (bad, p)
    return best[1]


def robust_loss(rows, cc, p):
    """Mean of min(|log(pred/measured)|, 1); an infeasible prediction costs 1."""
    total = 0.0
    count = 0
    for model, g, b, procs, tp, _ in rows:
        if tp <= 0:
            continue
        r = predict(cc[model], g, b, procs, p)
        total += 1.0 if r is None else min(abs(math.log(r[0] / tp)), 1.0)
        count += 1
    return total / count


def nelder_mead(f, x0, step=0.3, iters=3000, tol=1e-8):
    """Minimises f over positive vectors (works on their logarithms)."""
    n = len(x0)
    g = lambda lx: f([math.exp(v) for v in lx])
    simplex = [[math.log(v) for v in x0]]
    for i in range(n):
        simplex.append([v + (step if j == i else 0) for j, v in enumerate(simplex[0])])
    vals = [g(s) for s in simplex]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol:
            break
        c = [sum(s[j] for s in simplex[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - simplex[-1][j]) for j in range(n)]
        fr = g(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - simplex[-1][j]) for j in range(n)]
            fe = g(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (simplex[-1][j] - c[j]) for j in range(n)]
            fc = g(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    simplex[i] = [simplex[0][j] + 0.5 * (simplex[i][j] - simplex[0][j])
                                  for j in range(n)]
                    vals[i] = g(simplex[i])
    i = min(range(n + 1), key=lambda i: vals[i])
    return [math.exp(v) for v in simplex[i]], vals[i]


def fit(rows, cc):
    p = dict(SHIPPED)
    p.update(fit_memory(rows, cc))

    def objective(x):
        q = dict(p, **dict(zip(PERF, x)))
        if q['mps_fixed_serial_share'] > 1 or q['smooth_max_exponent'] < 1:
            return 1e9
        return robust_loss(rows, cc, q)

    x = [p[k] for k in PERF]
    for _ in range(3):  # restarts shake the simplex out of flat spots
        x, _ = nelder_mead(objective, x)
    p.update(zip(PERF, x))
    return p


def report(rows, cc, p):
    for k in PERF + MEMORY:
        print('  %-30s %.4g' % (k, p[k]))
    tp_err, lat_err, per_model, agree = errors(rows, cc, p)
    print('median relative error: throughput %.3f, latency %.3f; predicted feasible %d of %d '
          'measured-feasible rows (%.1f%%)' % (median(tp_err), median(lat_err), agree,
                                               len(tp_err), 100.0 * agree / len(tp_err)))
    for m in sorted(per_model):
        v = per_model[m]
        print('  %-12s median %.3f  predicted infeasible %d' % (m, median(v), v.count(1.0)))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('command', nargs='?', default='eval', choices=['cards', 'fit', 'eval'])
    ap.add_argument('--data', default=os.path.join(here, '..', '..', 'shared', 'data',
                                                   'parvagpu', 'prof_data'))
    args = ap.parse_args()
    cc = cards()
    if args.command == 'cards':
        for name, c in cc.items():
            print('%-12s gflops %-6g params_m %-6g (walker %.1f) layers %-4d activation_mib %g'
                  % (name, c['gflops'], c['params'], c['walker_params'], c['layers'], c['act']))
        return 0
    if not os.path.isdir(args.data):
        print('no measured data at %s (pass --data)' % args.data, file=sys.stderr)
        return 1
    rows = load(args.data)
    p = fit(rows, cc) if args.command == 'fit' else SHIPPED
    print('fitted parameters:' if args.command == 'fit' else 'shipped parameters:')
    report(rows, cc, p)
    return 0


if __name__ == '__main__':
    sys.exit(main())
