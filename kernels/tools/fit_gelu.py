#!/usr/bin/env python3
"""Coefficients of the gelu kernel (kernels/src/elementwise_ops.cuh, GeluOp).

With z = |x| / sqrt(2) and t = 1 / (1 + z / 2), erfc(z) / 2 = t * 2^(-z^2 log2(e) + Q(t)),
where Q(t) = log2(erfc(z) / (2t)) + z^2 log2(e) is smooth on t in (0, 1] (it tends to a
constant as z -> inf). This prints a degree-9 Chebyshev fit of Q (highest power first)
and its maximum error, then the worst relative error of gelu(x) = x * Phi(x) evaluated the
way the kernel does, every operation rounded to fp32, on a grid over [-8, 8]. Needs
mpmath.
"""
import math
import struct

import mpmath as mp

mp.mp.dps = 40
DEGREE = 9
C = mp.mpf("0.5")


LOG2E = 1 / mp.log(2)


def q_of_t(t):
    t = mp.mpf(t)
    z = (1 / t - 1) / C
    return mp.log(mp.erfc(z) / 2 / t, 2) + z * z * LOG2E


def f32(v):
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def gelu_fp32(x, coef):
    t = f32(1.0 / f32(f32(abs(x) * f32(float(C) / math.sqrt(2))) + 1.0))
    p = coef[0]
    for q in coef[1:]:
        p = f32(p * t + q)
    h = f32(t * f32(2.0 ** f32(f32(x * f32(-0.5 * float(LOG2E))) * x + p)))
    return f32(x * (h if x < 0 else f32(1 - h)))


def main():
    poly, err = mp.chebyfit(q_of_t, [mp.mpf("1e-30"), 1], DEGREE + 1, error=True)
    coef = [f32(c) for c in poly]
    print("fit error %.3g" % float(err))
    print("coefficients:", ", ".join("%.9e" % c for c in coef))
    worst = 0.0
    for i in range(-16000, 16001):
        x = f32(i / 2000.0)
        exact = float(x * mp.erfc(-x / mp.sqrt(2)) / 2)
        if exact != 0:
            worst = max(worst, abs(gelu_fp32(x, coef) - exact) / abs(exact))
    print("worst relative error of gelu on [-8, 8] in fp32: %.3g" % worst)


if __name__ == "__main__":
    main()
