"""The certified answer on closed-loop and coupled robots: warm time and its ratio to DRNG alone.

    python benchmarks/certificate.py

For each built-in parallel machine and each loop or coupling fixture of the tests: the
certified nullspace dimension, the best warm time of ``drng.nullspace(robot)`` (certified, the
default: 2 x samples assembled along paths from q0 in the compiled Newton kernel, the stacked
regressor and its rank), of ``drng.nullspace(robot, certify=False)`` (the principles alone),
and their ratio. Target: the certified answer under 0.2 s warm on each loop robot.
"""

import os
import sys

import drng
import robots
from drng.generator import load_kernels
from pga_dyn.errors import PgaDynError
from pga_dyn.interpreted import compiled_calls

sys.path.insert(0, os.path.dirname(__file__))
from timing import best  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "fixtures")


def cases():
    for name in robots.available():
        robot = robots.load(name)
        if robot.constrained:
            yield name, robot
    for file in sorted(os.listdir(FIXTURES)):
        if file.endswith(".urdf"):
            try:
                yield file[:-5], robots.load_urdf(os.path.join(FIXTURES, file))
            except PgaDynError as exc:  # fixtures of refused structures (hip_differential)
                print(f"{file[:-5]:22s} refused: {str(exc)[:90]}...")


def main():
    print(f"{'robot':22s} {'bodies':>6s} {'dim':>4s} {'certified':>9s} {'DRNG':>10s} {'certified':>11s} {'ratio':>8s}")
    for name, robot in cases():
        load_kernels(robot)  # compiled (a process's first calls run their Python source)
        with compiled_calls():  # the loops' kernels compiled (or loaded), not their Python source
            result = drng.nullspace(robot)  # compiles and fills the caches
        drng_s = best(lambda: drng.nullspace(robot, certify=False), 20)
        cert_s = best(lambda: drng.nullspace(robot), 3)
        print(
            f"{name:22s} {robot.n:6d} {result.dim:4d} {str(result.certified):>9s} {drng_s * 1e6:8.1f}us "
            f"{cert_s * 1e3:9.1f}ms {cert_s / drng_s:8.0f}"
        )


if __name__ == "__main__":
    main()
