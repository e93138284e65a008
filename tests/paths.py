"""The robot files of the tests: tests/fixtures/, URDF+ files written for pga-dyn's tests
(each file's header describes its geometry)."""

import pathlib

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
FOUR_BAR = str(FIXTURES / "four_bar.urdf")
SIX_BAR = str(FIXTURES / "six_bar.urdf")
LEG_LINKAGE = str(FIXTURES / "leg_linkage.urdf")
FIVE_BAR_SPHERICAL = str(FIXTURES / "five_bar_spherical.urdf")
ROTOR_CHAIN_6 = str(FIXTURES / "rotor_chain_6.urdf")
ROTOR_CHAIN_50 = str(FIXTURES / "rotor_chain_50.urdf")
