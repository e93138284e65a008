"""Sampled signals, a stage of the identification (:mod:`identification` lists them in
order): signals as robots log them put on a uniform grid, the cutoff of the filter chosen from
the spectrum of q, zero-phase smoothing and differentiation, the alignment of a delayed
channel. Arrays in, arrays out: no robot, no file.

Derivatives. q (ns, n_a) is smoothed and differentiated by a Savitzky-Golay filter
(:func:`savgol`: the derivatives at each sample of the least-squares polynomial of order
:data:`POLYORDER` over a window of 2 M + 1 samples centred on it; a symmetric FIR filter, so
zero phase; near the ends, the polynomial of the first or last window: what
``scipy.signal.savgol_filter`` computes with ``mode="interp"``, here in numpy, as is Welch's
spectrum, :func:`spectrum`, because importing ``scipy.signal`` takes longer, 0.4 s, than the
whole reading of a 20,000-sample log). The window
follows from the cutoff (Hz) by Schafer's rule for the -3 dB frequency of the smoother
(R. W. Schafer, "What is a Savitzky-Golay filter?", IEEE Signal Processing Magazine 2011),

    f_c / f_Nyquist ~ (order + 1) / (3.2 M - 4.6).

The smoothed q replaces q, so that q, qd and qdd are one signal. A Butterworth filter run
forwards and backwards (``filtfilt``) was tried first: inside it is as good, but its start-up
transients put errors of the size of qdd itself into the first and last 0.1 s
(docs/identification.md). Measured velocities, when they are the quieter signal, are smoothed
and differentiated once instead.

Sample times. Robots log with jitter (a 100 Hz controller writing every 8 to 13 ms) and drop
samples. Derivatives by a symmetric filter need a uniform grid: times whose deviation from
the uniform grid of their mean step stays below :data:`UNIFORM_RTOL` of the step are taken as
uniform (a timestamp rounded to the microsecond); otherwise every signal is interpolated onto
the uniform grid of the median step (:func:`resample`): positions and velocities by a cubic
spline through the samples (``scipy.interpolate.CubicSpline``, not-a-knot), forces linearly
(a spline would overshoot at the noise), and the report says so, with the range of steps
and the longest gap.

Cutoff. The default cutoff of the Savitzky-Golay differentiator is read off the spectrum of
q (:func:`bandwidth`): Welch's power spectral density P_j(f) of each detrended coordinate
(Hann window), its noise floor N_j the median of P_j over the upper half of the band
(f > f_s / 4, where a rigid-body trajectory tracked by a controller has no power left, only
encoder quantisation and noise), and the coordinate's bandwidth f_j the frequency below which
:data:`POWER_SHARE` of the power of its motion, max(P_j - N_j, 0), lies. The cutoff is at least
:data:`MARGIN` times the median of f_j over the coordinates (Gautier's rule: a position filter
at least five times the bandwidth of the motion does not distort it), and at least the
frequency up to which P_j stays :data:`SIGNAL_TO_NOISE` N_j (median over the coordinates):
below it the motion outweighs the noise, and a lower cutoff would only distort; it is kept
between :data:`MIN_CUTOFF` and :data:`MAX_CUTOFF` of the sample rate (noise-free data: the
latter). On MuJoCo logs of a UR5 at 1 kHz
tracking a 0.5 Hz excitation (docs/identification.md) it chooses 5 to 12 Hz; the former
default, 0.05 f_s = 50 Hz, passed the encoder noise into qdd (5 % error in the base
parameters at 1e-5 rad of noise, 70 % at 1e-4 rad).
"""

from __future__ import annotations

from math import perm

import numpy as np

from pga_dyn.errors import PgaDynError, optional

#: Polynomial order of the Savitzky-Golay filter that smooths and differentiates q.
POLYORDER = 4
#: Smallest half-width of the filter's window (samples).
MIN_HALF_WINDOW = 3
#: Times are uniform when they deviate from the grid of their mean step by at most this
#: fraction of the step.
UNIFORM_RTOL = 1e-3
#: The bandwidth of a coordinate: the frequency below which this share of the power of its
#: motion (its spectrum above the noise floor) lies.
POWER_SHARE = 0.999
#: The cutoff need not be below the frequency up to which the spectrum of q stays this multiple
#: of its noise floor (20 dB): the noise that a higher cutoff passes is the smaller part there.
SIGNAL_TO_NOISE = 100.0
#: The cutoff is at least this multiple of the bandwidth: a filter whose cutoff is closer to the motion
#: distorts it (Gautier's rule for the position filter of identification: at least 5 times the
#: bandwidth of the motion).
MARGIN = 5.0
#: Measured velocities are used only where they agree with q's derivative (:func:`velocity_lag`):
#: a lag of at most AGREE_LAG samples and a gain within AGREE_GAIN of 1, searched over
#: +-AGREE_SEARCH s.
AGREE_LAG = 0.5
AGREE_GAIN = 0.05
AGREE_SEARCH = 0.2
#: A signal whose log power density falls faster than this slope against log frequency over the
#: top quarter of the band was low-passed before it was logged (:func:`prefiltered`).
PREFILTER = -5.0
#: The order of the difference that takes a signal's white noise (:func:`white_noise`).
FLOOR_ORDER = 3
#: The standard deviation of a normal variable over its median absolute deviation, 1 / Phi^-1(3/4).
MAD_TO_STD = 1.482602218505602
#: The chosen cutoff is at least this fraction of the sample rate ...
MIN_CUTOFF = 0.002
#: ... and at most this fraction (the Savitzky-Golay window needs a few samples per period).
MAX_CUTOFF = 0.1


def is_uniform(t: np.ndarray) -> bool:
    """Whether the times ``t`` (ns,) lie on a uniform grid within :data:`UNIFORM_RTOL` of the step."""
    if len(t) < 2:
        return False
    step = (t[-1] - t[0]) / (len(t) - 1)
    grid = t[0] + step * np.arange(len(t))
    return bool(np.max(np.abs(t - grid)) <= UNIFORM_RTOL * step)


def resample(t: np.ndarray, smooth: dict, noisy: dict, where: str = "arrays") -> tuple:
    """Signals sampled at irregular times ``t`` (ns,) on the uniform grid of their median step.

    ``smooth``: {name: (ns, k) array} interpolated by cubic splines (positions, velocities);
    ``noisy``: {name: (ns, k) array or None} interpolated linearly (forces). Returns the grid
    (m,), the two dicts on it, and a sentence for the report."""
    interpolate = optional("scipy.interpolate", "resampling irregularly sampled data")
    steps = np.diff(t)
    step = float(np.median(steps))
    m = int(np.floor((t[-1] - t[0]) / step + 1e-9)) + 1
    if m < 2:
        raise PgaDynError(f"{where}: too few samples to resample")
    grid = t[0] + step * np.arange(m)
    out_smooth = {k: interpolate.CubicSpline(t, v, axis=0)(grid) for k, v in smooth.items()}
    out_noisy = {
        k: None if v is None else np.column_stack([np.interp(grid, t, c) for c in np.atleast_2d(v.T)])
        for k, v in noisy.items()
    }
    how = (
        f"sample times irregular (steps {1e3 * steps.min():.3g} to {1e3 * steps.max():.3g} ms, median "
        f"{1e3 * step:.3g} ms): {len(t)} samples resampled onto a uniform {1 / step:.6g} Hz grid of {m} "
        f"(cubic spline for positions and velocities, linear for forces)"
    )
    return grid, out_smooth, out_noisy, how


def spectrum(x: np.ndarray, rate: float) -> tuple:
    """Welch's power spectral density of the detrended columns of ``x`` (ns, n) sampled at
    ``rate`` Hz (Hann window, segments of a quarter of the record, at least 256 samples):
    frequencies (m,), densities (m, n), and the noise floor (n,), the median density above
    rate / 4. As ``scipy.signal.welch(scipy.signal.detrend(x, axis=0), rate, nperseg=...,
    axis=0)``: the least-squares line of each column taken out, segments overlapping by half,
    each with its mean taken out, a periodic Hann window, one-sided densities averaged over the
    segments."""
    ns = x.shape[0]
    nperseg = int(min(ns, max(256, 2 ** int(np.floor(np.log2(max(ns // 4, 1)))))))
    line = np.column_stack([np.arange(ns), np.ones(ns)])
    x = x - line @ np.linalg.lstsq(line, x, rcond=None)[0]
    segments = np.lib.stride_tricks.sliding_window_view(x, nperseg, axis=0)[:: nperseg - nperseg // 2]
    segments = segments - segments.mean(axis=-1, keepdims=True)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(nperseg) / nperseg)
    P = np.abs(np.fft.rfft(segments * window, axis=-1)) ** 2 / (rate * np.sum(window**2))
    P[..., 1 : (nperseg + 1) // 2] *= 2  # one-sided: the negative frequencies, not 0 nor Nyquist's
    f = np.fft.rfftfreq(nperseg, 1 / rate)
    P = P.mean(axis=0).T
    return f, P, np.median(P[f > rate / 4], axis=0)


def bandwidth(q: np.ndarray, rate: float) -> tuple:
    """The default cutoff (Hz) for differentiating ``q`` (ns, n) sampled at ``rate`` Hz, the
    bandwidth of the motion of each coordinate (n,) and a sentence for the report (module
    docstring)."""
    f, P, floor = spectrum(q, rate)
    motion = np.maximum(P - floor, 0.0)
    total = motion.sum(axis=0)
    band, clear = np.zeros(q.shape[1]), np.zeros(q.shape[1])
    for j in range(q.shape[1]):
        above = np.flatnonzero(P[:, j] > SIGNAL_TO_NOISE * floor[j])
        if total[j] > 0:
            band[j] = f[np.searchsorted(np.cumsum(motion[:, j]), POWER_SHARE * total[j])]
        if above.size:  # none: a coordinate that stands still (its spectrum is all noise)
            clear[j] = f[above[-1]]
    lo, hi = MIN_CUTOFF * rate, MAX_CUTOFF * rate
    undistorted, noiseless = MARGIN * float(np.median(band)), float(np.median(clear))
    wanted = max(undistorted, noiseless)
    cutoff = float(np.clip(wanted, lo, hi))
    clipped = "" if lo < wanted < hi else f"; kept within [{lo:.3g}, {hi:.3g}] Hz"
    how = (
        f"cutoff {cutoff:.3g} Hz from the spectrum of q: the larger of {MARGIN:g} times the motion's bandwidth "
        f"({100 * POWER_SHARE:g} % of its power below {np.median(band):.3g} Hz, median over the coordinates) and "
        f"the frequency up to which q stays {SIGNAL_TO_NOISE:g} times above its noise floor ({noiseless:.3g} Hz)"
        f"{clipped}"
    )
    return cutoff, band, how


def velocity_lag(q: np.ndarray, qd: np.ndarray, rate: float, window: int) -> tuple:
    """How measured velocities ``qd`` (ns, n) compare with the derivative of the positions ``q``
    over the motion's band: both through the same Savitzky-Golay filter of ``window`` samples
    (the smoother for qd, its first derivative for q), the lag d (n,) (s) that maximises their
    cross-correlation (within +-:data:`AGREE_SEARCH` s, refined by the parabola through the peak)
    and the gain a (n,) = <qd(t + d), q'(t)> / <q'(t), q'(t)>. A logger's low-pass on qd shows as
    a lag (a first-order 2 Hz filter delays a 0.5 Hz motion by 80 ms) and a gain below 1."""
    step = 1.0 / rate
    x, y = savgol(qd, window, 0, step), savgol(q, window, 1, step)
    x, y = x - x.mean(axis=0), y - y.mean(axis=0)
    most = max(1, min(int(AGREE_SEARCH * rate), len(x) // 4))
    lags, gains = np.zeros(q.shape[1]), np.ones(q.shape[1])
    for j in range(q.shape[1]):
        r = np.array(
            [
                x[max(k, 0) : len(x) + min(k, 0), j] @ y[max(-k, 0) : len(y) - max(k, 0), j]
                for k in range(-most, most + 1)
            ]
        )
        best = int(np.argmax(r))
        shift = float(best - most)
        if 0 < best < len(r) - 1 and r[best - 1] - 2 * r[best] + r[best + 1] < 0:
            shift += 0.5 * (r[best - 1] - r[best + 1]) / (r[best - 1] - 2 * r[best] + r[best + 1])
        k = best - most
        power = y[:, j] @ y[:, j]
        lags[j] = shift * step
        gains[j] = (
            (x[max(k, 0) : len(x) + min(k, 0), j] @ y[max(-k, 0) : len(y) - max(k, 0), j]) / power if power > 0 else 1.0
        )
    return lags, gains


def prefiltered(x: np.ndarray, rate: float) -> np.ndarray:
    """Per column of ``x`` (ns, n) sampled at ``rate`` Hz, the slope of its log power density
    against log frequency over the top quarter of the band, rate / 4 to rate / 2 (:func:`spectrum`,
    a least-squares line): about 0 for white noise, -1.5 to -3 after the linear interpolation of
    a jittered log's resampling, and below :data:`PREFILTER` for a signal low-passed before it
    was logged (a first-order filter at 2 Hz of a 200 Hz log: -9; a fourth-order one: below -10)."""
    f, P, _ = spectrum(x, rate)
    top = f > rate / 4
    logf = np.log(f[top])
    logP = np.log(np.maximum(P[top], np.finfo(float).tiny))
    centred = logf - logf.mean()
    return centred @ (logP - logP.mean(axis=0)) / (centred @ centred)


def velocity_is_quieter(q: np.ndarray, qd: np.ndarray, rate: float, cutoff: float) -> bool:
    """Whether measured velocities ``qd`` (ns, n) are less noisy than the derivative of the
    positions ``q`` up to ``cutoff`` Hz: the noise floor of qd below (2 pi cutoff)^2 times that
    of q (white position noise of density N differentiates to (2 pi f)^2 N) for most of the
    coordinates. A drive's velocity from encoder differences over one control period carries
    the quantisation step divided by the period, often the noisier signal."""
    _, _, nq = spectrum(q, rate)
    _, _, nqd = spectrum(qd, rate)
    return bool(np.median(nqd / np.maximum((2 * np.pi * cutoff) ** 2 * nq, np.finfo(float).tiny)) < 1.0)


def white_noise(x: np.ndarray) -> np.ndarray:
    """The standard deviation (n,) of the white noise in each column of ``x`` (ns, n), read off
    its content above the motion: the k-th difference (k = :data:`FLOOR_ORDER`), a high-pass
    filter of gain |2 sin(pi f / f_s)|^k (white noise of variance sigma^2 comes out with variance
    C(2k, k) sigma^2; a motion at f_s / 20 is damped to 3 %), and its robust RMS, 1.4826 times its
    median absolute deviation: sigma = 1.4826 MAD / sqrt(C(2k, k)) (von Neumann's and Rice's
    difference-based variance, made robust). The filter is 4 samples long: the steps of Coulomb
    friction at the sign changes of qd fill a few samples each and the median ignores them."""
    from math import comb

    high = np.diff(x, FLOOR_ORDER, axis=0)
    mad = np.median(np.abs(high - np.median(high, axis=0)), axis=0)
    return MAD_TO_STD * mad / np.sqrt(comb(2 * FLOOR_ORDER, FLOOR_ORDER))


def savgol_matrix(window: int, deriv: int, step: float) -> np.ndarray:
    """The Savitzky-Golay filter of order :data:`POLYORDER` over ``window`` (odd, at least
    POLYORDER + 1) samples ``step`` s apart as a (window, window) matrix: row i times the samples
    of a window is the ``deriv``-th time derivative, at the window's i-th sample, of the
    least-squares polynomial through them. The middle row holds the filter's taps
    (``scipy.signal.savgol_coeffs(window, POLYORDER, deriv, step, use="dot")``), the others the
    derivatives in the first and last half windows of a record. The polynomial is fitted in the
    window's positions scaled to [-1, 1], so that long windows stay well conditioned."""
    half = window // 2
    u = np.arange(-half, half + 1) / half
    powers = np.arange(POLYORDER + 1)
    fit = np.linalg.pinv(u[:, None] ** powers)
    falling = np.array([perm(int(j), deriv) for j in powers], dtype=float)  # d^k u^j / du^k = j!/(j-k)! u^(j-k)
    return (falling * u[:, None] ** np.maximum(powers - deriv, 0)) @ fit / (half * step) ** deriv


def savgol(x: np.ndarray, window: int, deriv: int, step: float) -> np.ndarray:
    """The ``deriv``-th derivative of the columns of ``x`` (ns, n), ns >= ``window``, samples
    ``step`` s apart, by the Savitzky-Golay filter of :func:`savgol_matrix`: inside, the filter's
    taps; in the first and last half windows, the polynomial of the first and last window
    (``scipy.signal.savgol_filter(x, window, POLYORDER, deriv, step, axis=0, mode="interp")``)."""
    matrix, half = savgol_matrix(window, deriv, step), window // 2
    out = np.empty(x.shape)
    for j in range(x.shape[1]):
        out[half:-half, j] = np.convolve(x[:, j], matrix[half, ::-1], mode="valid")
    out[:half] = matrix[:half] @ x[:window]
    out[-half:] = matrix[half + 1 :] @ x[-window:]
    return out


def filter_window(cutoff: float, rate: float) -> int:
    """The Savitzky-Golay window (odd, samples) of :func:`differentiate` for a ``cutoff`` (Hz) at
    ``rate`` Hz: the shortest whose passband reaches the cutoff, at least 2 MIN_HALF_WINDOW + 1."""
    half = max(MIN_HALF_WINDOW, int(np.ceil(((POLYORDER + 1) / (cutoff / (rate / 2)) + 4.6) / 3.2)))
    return 2 * half + 1


def velocity_delay(t: np.ndarray, q: np.ndarray, qd: np.ndarray, cutoff: float | None = None) -> float:
    """The delay (s) of measured velocities ``qd`` (ns, n) behind the derivative of the positions
    ``q`` (ns, n) at uniform times ``t``: the median over the channels of :func:`velocity_lag`
    (the filters of :func:`differentiate` at ``cutoff`` Hz, None: from the spectrum of q). A
    velocity logged as the backward difference of its positions, (q_k - q_(k-1)) / h (a
    semi-implicit Euler simulator, an encoder's difference), lags by half a sample."""
    rate = (len(t) - 1) / (t[-1] - t[0])
    cutoff = bandwidth(q, rate)[0] if cutoff is None else cutoff
    lags, _ = velocity_lag(q, qd, rate, filter_window(cutoff, rate))
    return float(np.median(lags))


def differentiate(
    t: np.ndarray, q: np.ndarray, cutoff: float | None = None, where: str = "arrays", qd: np.ndarray | None = None
) -> tuple:
    """Smoothed positions, velocities and accelerations (ns, n_a) of positions ``q`` sampled at
    uniform times ``t`` (ns,) (see the module docstring), the standard deviation (n_a,) of the
    noise the velocities keep, and a sentence saying how they were obtained. The noise: white
    noise of density N (the floor of :func:`spectrum`, variance sigma^2 = N f_s / 2) through the
    filter of taps c has standard deviation sigma ||c||; the taps of the first derivative for
    derived velocities, of the smoother for measured ones. ``cutoff`` (Hz): the filter's; None: chosen from the spectrum of q
    (:func:`bandwidth`). With measured velocities ``qd`` (ns, n_a), qd is smoothed and qdd is
    its derivative, instead of q's second, when they are the quieter signal
    (:func:`velocity_is_quieter`). PgaDynError naming ``where`` for times that are not
    uniform, a cutoff outside (0, rate / 2) or fewer samples than the filter's window."""
    ns = len(t)
    if not is_uniform(t):
        raise PgaDynError(
            f"{where}: qd and qdd are derived from q only for uniformly sampled times; resample first (resample)"
        )
    step = (t[-1] - t[0]) / (ns - 1)
    rate = 1.0 / step
    chosen = ""
    if cutoff is None:
        cutoff, _, chosen = bandwidth(q, rate)
        chosen = f"; {chosen}"
    if not (isinstance(cutoff, (int, float)) and 0 < cutoff < rate / 2):
        raise PgaDynError(
            f"{where}: the filter cutoff must be between 0 and half the sample rate ({rate / 2:.6g} Hz), got {cutoff!r}"
        )
    window = filter_window(cutoff, rate)
    half = window // 2
    if ns < window:
        raise PgaDynError(
            f"{where}: {ns} samples are too few to differentiate with a {window}-sample window "
            f"(cutoff {cutoff:.6g} Hz at {rate:.6g} Hz); give qd and qdd, or raise the cutoff"
        )

    def smooth(x, deriv):
        return savgol(x, window, deriv, step)

    if qd is not None and not velocity_is_quieter(q, qd, rate, cutoff):
        qd, chosen = None, f"{chosen}; the measured qd left out: its noise floor is above that of q's derivative"
    if qd is not None:
        lag, gain = velocity_lag(q, qd, rate, window)
        off = (np.abs(lag) > AGREE_LAG / rate) | (np.abs(gain - 1) > AGREE_GAIN)
        if off.any():
            j = int(np.argmax(np.abs(lag) * rate + np.abs(gain - 1) / AGREE_GAIN))
            qd, chosen = (
                None,
                (
                    f"{chosen}; the measured qd left out: it disagrees with q's derivative over the motion "
                    f"({int(off.sum())} of {len(off)} coordinates; the worst lags it by {1e3 * lag[j]:.3g} ms with a gain "
                    f"of {gain[j]:.3g}: a logger's low-pass?)"
                ),
            )
    measured = q if qd is None else qd
    taps = savgol_matrix(window, int(qd is None), step)[half]
    noise = np.sqrt(spectrum(measured, rate)[2] * rate / 2) * np.linalg.norm(taps)
    if qd is None:
        q, qd, qdd = (smooth(q, d) for d in range(3))
        what = "qd and qdd derived: q smoothed and differentiated"
    else:
        q, qd, qdd = smooth(q, 0), smooth(qd, 0), smooth(qd, 1)
        what = "qdd derived from the measured qd: q and qd smoothed, qd differentiated,"
    how = (
        f"{what} by a Savitzky-Golay filter (zero phase, order {POLYORDER}, window {window} samples = "
        f"{window * step:.4g} s, cutoff {cutoff:.4g} Hz at {rate:.6g} Hz{chosen})"
    )
    return q, qd, qdd, noise, how


def advance(t: np.ndarray, x: np.ndarray, delay: float) -> tuple:
    """The samples of ``x`` (ns, n) taken ``delay`` s later, x(t + delay), by linear
    interpolation at the times ``t`` (ns,) where t + delay lies inside the record: the values
    (m, n) and the mask (ns,) of those times. A channel that lags the positions by ``delay``
    is aligned with them by it."""
    inside = (t + delay >= t[0]) & (t + delay <= t[-1])
    return np.column_stack([np.interp(t[inside] + delay, t, c) for c in x.T]), inside


#: Decimation's anti-aliasing filter: a linear-phase FIR low-pass (Kaiser window,
#: ``scipy.signal.kaiserord``) whose stopband starts at the new Nyquist frequency f_s / (2 N) with
#: DECIMATION_ATTENUATION dB per pass and whose passband ends at DECIMATION_PASSBAND of it (gain
#: within 1e-4 of 1 there, run forwards and backwards).
DECIMATION_ATTENUATION = 80.0
DECIMATION_PASSBAND = 0.8


def decimate(t: np.ndarray, signals: dict, factor: int, where: str = "arrays") -> tuple:
    """Every ``factor``-th sample of ``signals`` ({name: (ns, k) array or None}) at uniform times
    ``t`` (ns,), after the same zero-phase anti-aliasing filter on each: the FIR of
    :data:`DECIMATION_ATTENUATION`, :data:`DECIMATION_PASSBAND` run forwards and backwards
    (``scipy.signal.filtfilt``: zero phase, the response squared; the record extended at each
    end by its point reflection, so the first and last samples keep their value and slope;
    ``scipy.signal.decimate`` pads with zeros and pulls them towards 0). The motion must lie in
    the passband: the bandwidth of every coordinate of ``signals["q"]`` (:func:`bandwidth`) at
    most DECIMATION_PASSBAND times the new Nyquist frequency. Returns the times (m,), the
    signals (m, k) and a sentence for the report; PgaDynError naming ``where`` otherwise, or
    for records shorter than the filter's padding."""
    signal = optional("scipy.signal", "decimation")
    if not (isinstance(factor, (int, np.integer)) and factor >= 1):
        raise PgaDynError(f"{where}: the decimation factor must be a whole number >= 1, got {factor!r}")
    if factor == 1:
        return t, signals, "not decimated"
    if not is_uniform(t):
        raise PgaDynError(
            f"{where}: decimation needs uniformly sampled times (give qd and qdd at uniform times, "
            "or leave them out so that the samples are resampled first)"
        )
    rate = (len(t) - 1) / (t[-1] - t[0])
    nyquist = rate / (2 * factor)
    _, band, _ = bandwidth(signals["q"], rate)
    if band.max() > DECIMATION_PASSBAND * nyquist:
        raise PgaDynError(
            f"{where}: decimating by {factor} leaves a Nyquist frequency of {nyquist:.4g} Hz, and the "
            f"motion reaches {band.max():.4g} Hz (above {DECIMATION_PASSBAND:g} of it, the "
            "anti-aliasing filter's passband): decimate less"
        )
    numtaps, beta = signal.kaiserord(DECIMATION_ATTENUATION, (1 - DECIMATION_PASSBAND) / factor)
    numtaps |= 1
    b = signal.firwin(numtaps, (1 + DECIMATION_PASSBAND) / 2 / factor, window=("kaiser", beta))
    if len(t) <= 3 * numtaps:
        raise PgaDynError(
            f"{where}: {len(t)} samples are too few to decimate by {factor} (the anti-aliasing "
            f"filter has {numtaps} taps and needs more than {3 * numtaps} samples)"
        )
    out = {k: None if v is None else signal.filtfilt(b, [1.0], v, axis=0)[::factor] for k, v in signals.items()}
    how = (
        f"decimated by {factor} to {rate / factor:.6g} Hz after a zero-phase anti-aliasing FIR ({numtaps} taps, "
        f"Kaiser, passband to {DECIMATION_PASSBAND * nyquist:.4g} Hz, {DECIMATION_ATTENUATION:g} dB from "
        f"{nyquist:.4g} Hz) on every signal alike"
    )
    return t[::factor], out, how
