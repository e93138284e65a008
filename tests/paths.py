"""Where the tests find the shared material: ``shared/`` beside the checkout (as on CI), or the
folder named by the environment variable PGA_DYN_SHARED."""

import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = pathlib.Path(os.environ.get("PGA_DYN_SHARED", ROOT.parent / "shared"))
URDF_PLUS = SHARED / "urdf_plus_examples"
FOUR_BAR = str(URDF_PLUS / "four_bar.urdf")
SIX_BAR = str(URDF_PLUS / "six_bar.urdf")
GO2_SOURCE = str(SHARED / "models" / "go2.urdf")
