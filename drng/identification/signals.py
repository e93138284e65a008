"""Sampled signals, a stage of the identification (:mod:`drng.identification` lists them in
order): zero-phase smoothing and differentiation of uniformly sampled positions. Arrays in,
arrays out: no robot, no file.

Derivatives. q (ns, n_a) is smoothed and differentiated by a Savitzky-Golay filter
(``scipy.signal.savgol_filter``: the derivatives at each sample of the least-squares polynomial
of order :data:`POLYORDER` over a window of 2 M + 1 samples centred on it; a symmetric FIR
filter, so zero phase; near the ends, the polynomial of the first or last window). The window
follows from the cutoff ``cutoff`` (Hz; default :data:`DEFAULT_CUTOFF` times the sample rate) by
Schafer's rule for the -3 dB frequency of the smoother (R. W. Schafer, "What is a Savitzky-Golay
filter?", IEEE Signal Processing Magazine 2011),

    f_c / f_Nyquist ~ (order + 1) / (3.2 M - 4.6).

The smoothed q replaces q, so that q, qd and qdd are one signal. A Butterworth filter run
forwards and backwards (``filtfilt``) was tried first: inside it is as good, but its start-up
transients put errors of the size of qdd itself into the first and last 0.1 s
(docs/identification.md). This needs uniform sampling (to :data:`UNIFORM_RTOL` of the step).
"""

from __future__ import annotations

import numpy as np

from pga_dyn.errors import PgaDynError, optional

#: Polynomial order of the Savitzky-Golay filter that smooths and differentiates q.
POLYORDER = 4
#: Default cutoff (-3 dB) of the filter, as a fraction of the sample rate (10 Hz at 200 Hz).
DEFAULT_CUTOFF = 0.05
#: Smallest half-width of the filter's window (samples).
MIN_HALF_WINDOW = 3
#: Sample times may deviate from a uniform grid by this fraction of the step when q is differentiated.
UNIFORM_RTOL = 1e-6


def differentiate(t, q, cutoff=None, where: str = "arrays"):
    """Smoothed positions, velocities and accelerations (ns, n_a) of positions ``q`` (ns, n_a)
    sampled at the uniform times ``t`` (ns,) (see the module docstring), and a sentence saying
    how they were obtained. PgaDynError naming ``where`` for times that are not uniform, a
    cutoff outside (0, rate / 2) or fewer samples than the filter's window."""
    signal = optional("scipy.signal", "deriving qd and qdd from q")
    ns = len(t)
    step = (t[-1] - t[0]) / (ns - 1) if ns > 1 else 0.0
    if ns < 2 or np.max(np.abs(np.diff(t) - step)) > UNIFORM_RTOL * step:
        raise PgaDynError(f"{where}: qd and qdd are derived from q only for uniformly sampled times; "
                          "give qd and qdd, or resample")
    rate = 1.0 / step
    cutoff = DEFAULT_CUTOFF * rate if cutoff is None else cutoff
    if not (isinstance(cutoff, (int, float)) and 0 < cutoff < rate / 2):
        raise PgaDynError(f"{where}: the filter cutoff must be between 0 and half the sample rate "
                          f"({rate / 2:.6g} Hz), got {cutoff!r}")
    half = max(MIN_HALF_WINDOW, int(np.ceil(((POLYORDER + 1) / (cutoff / (rate / 2)) + 4.6) / 3.2)))
    window = 2 * half + 1
    if ns < window:
        raise PgaDynError(f"{where}: {ns} samples are too few to differentiate with a {window}-sample window "
                          f"(cutoff {cutoff:.6g} Hz at {rate:.6g} Hz); give qd and qdd, or raise the cutoff")
    q, qd, qdd = (signal.savgol_filter(q, window, POLYORDER, deriv=d, delta=step, axis=0, mode="interp")
                  for d in range(3))
    how = (f"q smoothed and differentiated by a Savitzky-Golay filter (zero phase, order {POLYORDER}, window "
           f"{window} samples = {window * step:.4g} s, cutoff {cutoff:.4g} Hz at {rate:.6g} Hz)")
    return q, qd, qdd, how
