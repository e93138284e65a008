"""drng.base_parameters against independent derivations: the classical Khalil-Kleinfinger
regrouping of a modified-DH robot written out here, a FIGAROH-style pivoted QR of Pinocchio's
regressor, the certified nullspace and fresh samples of the regressor."""

import json

import numpy as np
import pytest
import rpna_models
from oracle import Oracle, erd_path, random_states

import drng
import pga_dyn
import robots
from drng.classification import link_nullspace
from drng.result import complement
from pga_dyn.cli import main
from pga_dyn.conventions import LINK_PARAM_NAMES
from pga_dyn.errors import PgaDynError
from robots.urdf import load_urdf

ERD_ARMS = ["ur_description/urdf/ur5_robot.urdf", "z1_description/urdf/z1.urdf", "xarm_description/urdf/xarm7.urdf"]
COUNTS = {"puma560": 36, "2rru_1rrs": 25, "2prs_1psr": 23}


def largest_angle(A, B) -> float:
    """The sine of the largest principal angle between the column spaces of A and B (same rank)."""
    qa, qb = np.linalg.qr(A)[0], np.linalg.qr(B)[0]
    return max(np.linalg.norm(qb - qa @ (qa.T @ qb), 2), np.linalg.norm(qa - qb @ (qb.T @ qa), 2))


# -- the classical regrouping of a modified-DH robot (Khalil and Kleinfinger 1986) ------------

KHALIL = {
    "XX": "Ixx",
    "XY": "Ixy",
    "XZ": "Ixz",
    "YY": "Iyy",
    "YZ": "Iyz",
    "ZZ": "Izz",
    "MX": "mcx",
    "MY": "mcy",
    "MZ": "mcz",
    "M": "m",
}


def khalil_puma(dh) -> dict:
    """The base parameters of a 6R robot in modified-DH frames with gravity along joint 1, by
    the regrouping rules of Khalil and Kleinfinger (Khalil and Dombre 2002, section 12.5):
    {leading link-frame name: row of K (60,)}.

    Each standard parameter is a unit vector over the 60 link-frame parameters. For j = n..2,
    the current YY_j, MZ_j, M_j (a mass distribution on the axis z_j) are moved onto body j-1,
    whose frame sees joint j at (alpha_j, d_j = a_{j-1}, r_j = d_j of Craig's table):

        XX_j  -= YY_j
        XX_{j-1} += YY_j + 2 r MZ_j + r^2 M_j
        XY_{j-1} += d S (MZ_j + r M_j)             XZ_{j-1} -= d C (MZ_j + r M_j)
        YY_{j-1} += C^2 YY_j + 2 r C^2 MZ_j + (d^2 + r^2 C^2) M_j
        YZ_{j-1} += C S (YY_j + 2 r MZ_j + r^2 M_j)
        ZZ_{j-1} += S^2 YY_j + 2 r S^2 MZ_j + (d^2 + r^2 S^2) M_j
        MX_{j-1} += d M_j    MY_{j-1} -= S (MZ_j + r M_j)    MZ_{j-1} += C (MZ_j + r M_j)
        M_{j-1}  += M_j

    with C = cos(alpha_j), S = sin(alpha_j). Body 1 turns about the gravity axis: only ZZ_1R
    acts; bodies 2..n keep XX, XY, XZ, YZ, ZZ, MX, MY (36 base parameters for the Puma)."""
    n = len(dh)
    index = {(k, b): 10 * (b - 1) + LINK_PARAM_NAMES.index(v) for b in range(1, n + 1) for k, v in KHALIL.items()}
    P = {key: np.eye(10 * n)[c] for key, c in index.items()}
    for j in range(n, 1, -1):
        alpha, d, r = dh[j - 1]
        C, S = np.cos(alpha), np.sin(alpha)
        YY, MZ, M = P[("YY", j)], P[("MZ", j)], P[("M", j)]
        p = j - 1
        P[("XX", j)] = P[("XX", j)] - YY
        P[("XX", p)] = P[("XX", p)] + YY + 2 * r * MZ + r * r * M
        P[("XY", p)] = P[("XY", p)] + d * S * (MZ + r * M)
        P[("XZ", p)] = P[("XZ", p)] - d * C * (MZ + r * M)
        P[("YY", p)] = P[("YY", p)] + C * C * YY + 2 * r * C * C * MZ + (d * d + r * r * C * C) * M
        P[("YZ", p)] = P[("YZ", p)] + C * S * (YY + 2 * r * MZ + r * r * M)
        P[("ZZ", p)] = P[("ZZ", p)] + S * S * YY + 2 * r * S * S * MZ + (d * d + r * r * S * S) * M
        P[("MX", p)] = P[("MX", p)] + d * M
        P[("MY", p)] = P[("MY", p)] - S * (MZ + r * M)
        P[("MZ", p)] = P[("MZ", p)] + C * (MZ + r * M)
        P[("M", p)] = P[("M", p)] + M
    kept = [("ZZ", 1)] + [(k, b) for b in range(2, n + 1) for k in ("XX", "XY", "XZ", "YZ", "ZZ", "MX", "MY")]
    return {f"{KHALIL[k]}{b}": P[(k, b)] for k, b in kept}


def test_rpna_puma_matches_khalil_kleinfinger():
    robot = rpna_models.puma()
    bp = drng.base_parameters(robot)
    classical = khalil_puma(rpna_models.PUMA_DH)
    names = bp.parameter_names
    assert bp.num_base_parameters == 36
    assert sorted(names[k] for k in bp.leading) == sorted(classical)
    for j, k in enumerate(bp.leading):
        expected = classical[names[k]]
        assert np.abs(bp.K[j] - expected).max() < 1e-12, (bp.expressions[j], names[k])
        regrouped = np.count_nonzero(np.abs(expected) > 1e-12) > 1
        assert bp.names[j] == names[k] + ("R" if regrouped else "")
    text = dict(zip(bp.names, bp.expressions))
    assert text["Izz1R"].startswith("Izz1R = Izz1 + Iyy2 + 0.2*m3 + 0.8*mcz3 + Iyy3")
    assert text["Ixx6R"] == "Ixx6R = Ixx6 - Iyy6"
    assert text["mcx3R"] == "mcx3R = mcx3 + 0.153*m4 + 0.153*m5 + 0.153*m6"


# -- every robot: span, Y_b K = Y, clean coefficients, classes --------------------------------


def robot_cases():
    cases = [(name, lambda name=name: robots.load(name)) for name in ("puma560", "go2", "2rru_1rrs", "2prs_1psr")]
    cases += [(rel.split("/")[0], lambda rel=rel: load_urdf(erd_path(rel))) for rel in ERD_ARMS]
    return cases


@pytest.mark.parametrize("name, make", robot_cases(), ids=[c[0] for c in robot_cases()])
def test_base_parameters_of_robot(name, make):
    robot = make()
    result = drng.nullspace(robot, certify=True)
    assert result.certified
    bp = drng.base_parameters(robot, result)
    K = bp.K
    assert K.shape == (result.num_base_parameters, 10 * robot.n)
    if name in COUNTS:
        assert bp.num_base_parameters == COUNTS[name]
    # span(K^T) is the identifiable subspace: the complement of the link-frame nullspace
    assert largest_angle(K.T, complement(link_nullspace(robot, result), 10 * robot.n)) < 1e-9
    assert np.array_equal(K[:, bp.leading], np.eye(len(bp.leading)))
    assert np.abs(K).max() < 1e3
    # Y_b K = Y on fresh samples (1000 states; independent of the certificate's samples)
    states = pga_dyn.sample_states(robot, 1000, seed=123)
    Y = states.regressor() @ bp.link_map
    Yb = bp.regressor(states)
    assert np.abs(Yb @ K - Y).max() < 1e-10 * np.abs(Y).max()
    assert np.array_equal(bp.regressor(Y), Yb)
    # the forces of the model's own inertias from beta
    phi = pga_dyn.to_link_parameters(robot, pga_dyn.inertial_parameters(robot))
    tau = states.regressor() @ pga_dyn.inertial_parameters(robot)
    assert np.abs(Yb @ bp.values(phi) - tau).max() < 1e-10 * np.abs(tau).max()
    # the roles agree with drng.classify
    classes = drng.classify(robot, result)
    assert [(p.body, p.parameter, p.cls) for p in bp.parameters] == [tuple(row) for row in classes]


# -- FIGAROH-style: pivoted QR of Pinocchio's stacked regressor -------------------------------


def pivoted_qr(W):
    """Householder QR with column pivoting (Businger and Golub 1965): R and the permutation."""
    A = np.array(W, dtype=float)
    m, p = A.shape
    perm = np.arange(p)
    for k in range(min(m, p)):
        j = k + int(np.argmax(np.linalg.norm(A[k:, k:], axis=0)))
        A[:, [k, j]], perm[[k, j]] = A[:, [j, k]], perm[[j, k]]
        x = A[k:, k]
        v = x.copy()
        v[0] += np.copysign(np.linalg.norm(x), x[0])
        if np.linalg.norm(v) > 0:
            v /= np.linalg.norm(v)
            A[k:, k:] -= 2.0 * np.outer(v, v @ A[k:, k:])
    return np.triu(A[: min(m, p)]), perm


def qr_base_parameters(W, rtol=1e-8):
    """Base parameters from a stacked regressor W (rows: samples, columns: link parameters):
    the first r pivots of a pivoted QR are the independent columns b, the others d, and with
    W[:, b d] = Q [R1 R2], beta = phi_b + R1^-1 R2 phi_d. Returns K (r, p) and b."""
    norms = np.linalg.norm(W, axis=0)
    cols = np.flatnonzero(norms > 1e-10 * norms.max())
    R, perm = pivoted_qr(W[:, cols])
    diag = np.abs(np.diag(R))
    r = int(np.sum(diag > rtol * diag[0]))
    b = np.sort(cols[perm[:r]])
    d = np.setdiff1d(cols, b)
    R = np.linalg.qr(np.hstack([W[:, b], W[:, d]]), mode="r")
    K = np.zeros((r, W.shape[1]))
    K[np.arange(r), b] = 1.0
    K[:, d] = np.linalg.solve(R[:r, :r], R[:r, r:])
    return K, b


@pytest.mark.parametrize("path", ["puma560", *ERD_ARMS])
def test_against_pivoted_qr_of_pinocchio(path):
    if path == "puma560":
        robot, path = robots.load("puma560"), robots.data_path("puma560")
    else:
        path = erd_path(path)
        robot = load_urdf(path)
    oracle = Oracle(robot, path)
    Q, QD, QDD = random_states(robot, 150, seed=7)
    W = np.vstack([oracle.regressor(Q[s], QD[s], QDD[s]) for s in range(len(Q))])
    Kqr, lead_qr = qr_base_parameters(W)
    bp = drng.base_parameters(robot)
    assert Kqr.shape == bp.K.shape
    assert largest_angle(Kqr.T, bp.K.T) < 1e-9
    # Pinocchio's regressor is in the link-frame coordinates of K: its Y_b gives it back
    assert np.abs(bp.regressor(W) @ bp.K - W).max() < 1e-10 * np.abs(W).max()
    # A row is fixed by its leading parameter and the eliminated set: where both methods lead
    # with the same parameter and regroup into it only parameters that both eliminate, the
    # expressions agree.
    ours = {int(k): j for j, k in enumerate(bp.leading)}
    same = 0
    for j, k in enumerate(lead_qr):
        others = set(np.flatnonzero(np.abs(Kqr[j]) > 1e-9)) - {k}
        if k in ours and not others & set(ours):
            assert np.abs(bp.K[ours[k]] - Kqr[j]).max() < 1e-9, bp.expressions[ours[k]]
            same += 1
    assert same >= len(lead_qr) // 3  # 19 of 43 (xArm7) to 29 of 36 (Puma 560)
    # keeping the QR's leading parameters gives its expressions, all of them
    names = bp.parameter_names
    kept = drng.base_parameters(robot, keep=[names[k] for k in lead_qr])
    assert np.array_equal(kept.leading, lead_qr)
    assert np.abs(kept.K - Kqr).max() < 1e-9


@pytest.mark.parametrize("make", [rpna_models.puma, lambda: robots.load("2rru_1rrs")], ids=["rpna_puma", "2rru_1rrs"])
def test_same_base_parameters_from_every_method(make):
    robot = make()
    reference = drng.base_parameters(robot)
    results = [drng.numerical_nullspace(robot), drng.nullspace(robot, certify=False)]
    if not robot.constrained:
        results.append(drng.rpna(robot))
    for result in results:
        bp = drng.base_parameters(robot, result)
        assert np.array_equal(bp.leading, reference.leading), result.method
        assert np.abs(bp.K - reference.K).max() < 1e-10, result.method
        assert bp.expressions == reference.expressions, result.method


# -- options and errors -----------------------------------------------------------------------


def test_keep_and_errors():
    robot = rpna_models.puma()
    result = drng.rpna(robot)
    default = drng.base_parameters(robot, result)
    assert "m6" not in [default.parameter_names[k] for k in default.leading]
    bp = drng.base_parameters(robot, result, keep=("m6",))
    assert "m6" in [bp.parameter_names[k] for k in bp.leading]
    assert largest_angle(bp.K.T, default.K.T) < 1e-9
    roles = {p.name: p for p in bp.parameters}
    assert roles["m1"].role == "unidentifiable" and roles["m1"].base == ()
    assert roles["Iyy6"].role == "regrouped" and "Ixx6R" in roles["Iyy6"].base
    with pytest.raises(PgaDynError, match="m1 cannot be kept"):
        drng.base_parameters(robot, result, keep=("m1",))
    with pytest.raises(PgaDynError, match="unknown parameter 'mass6'"):
        drng.base_parameters(robot, result, keep=("mass6",))
    with pytest.raises(PgaDynError, match="keep must be a sequence"):
        drng.base_parameters(robot, result, keep="m6")
    with pytest.raises(PgaDynError, match="phi must have shape"):
        bp.values(np.zeros(7))
    with pytest.raises(PgaDynError, match="states_or_Y"):
        bp.regressor(np.zeros((3, 59)))
    with pytest.raises(PgaDynError, match="states_or_Y are states of robot"):
        bp.regressor(pga_dyn.sample_states(rpna_models.planar_2r(), 5, seed=0))


# -- command line -----------------------------------------------------------------------------


def test_cli_base_puma(capsys, tmp_path):
    csv = tmp_path / "puma.csv"
    assert main(["base", "puma560", "--csv", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "base parameters:      36" in out
    assert "Izz1R = Izz1 + Iyy2 + 0.186451*m3 + Iyy3" in out
    lines = csv.read_text().splitlines()
    assert lines[0] == "name,leading,body,value,expression" and len(lines) == 37
    assert main(["base", "puma560", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    bp = drng.base_parameters(robots.load("puma560"))
    assert np.array_equal(np.array(data["K"]), bp.K)
    assert data["names"] == list(bp.names) and data["expressions"] == list(bp.expressions)
    phi = pga_dyn.to_link_parameters(robots.load("puma560"), pga_dyn.inertial_parameters(robots.load("puma560")))
    assert np.allclose(data["values"], bp.K @ phi.reshape(-1), rtol=0, atol=1e-12)


def test_cli_base_parallel_machine(capsys):
    assert main(["base", "2rru_1rrs"]) == 0
    out = capsys.readouterr().out
    assert "base parameters:      25" in out
    assert out.count(" = ") == 25


def test_cli_analyze_points_regrouped_parameters_to_base_parameters(capsys):
    assert main(["analyze", "puma560", "--per-parameter", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["regrouped_into"]["Iyy6"] == ["Ixx5R", "Izz5R", "Ixx6R"]
    assert report["regrouped_into"]["mcz6"] == ["mcy5R"]
    assert "m1" not in report["regrouped_into"]  # unidentifiable, not regrouped
    assert main(["analyze", "puma560", "--per-parameter"]) == 0
    assert "Iyy2       Izz1R, Ixx2R" in capsys.readouterr().out


def test_no_public_name_is_shadowed_by_a_submodule():
    """A package's lazy public function and a submodule of the same name would collide: importing the
    submodule replaces the package attribute (drng.base_parameters was once both)."""
    import pathlib

    import pga_dyn

    for package in (drng, pga_dyn):
        folder = pathlib.Path(package.__file__).parent
        submodules = {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir() if p.is_dir()}
        assert not set(package.__all__) & submodules, package.__name__


def test_base_parameters_carry_the_status_of_their_nullspace():
    """Base parameters are only as right as the nullspace behind them: they say which it was."""
    puma = robots.load("puma560")
    bp = drng.base_parameters(puma)
    assert bp.status == "proven" and bp.trusted
    pkm = robots.load("2rru_1rrs")
    unchecked = drng.base_parameters(pkm, drng.nullspace(pkm, certify=False))
    assert unchecked.status == "not certified" and not unchecked.trusted
    certified = drng.base_parameters(pkm)
    assert certified.status == "certified" and certified.trusted


def test_identification_refuses_an_untrusted_nullspace(monkeypatch):
    """identification_model does not build on base parameters whose nullspace is not trusted."""
    from identification import identification_model
    from pga_dyn.errors import PgaDynError

    pkm = robots.load("2rru_1rrs")
    untrusted = drng.base_parameters(pkm, drng.nullspace(pkm, certify=False))
    monkeypatch.setattr(drng, "base_parameters", lambda robot: untrusted)
    with pytest.raises(PgaDynError, match="2rru_1rrs.*not certified.*could be wrong"):
        identification_model(pkm)
