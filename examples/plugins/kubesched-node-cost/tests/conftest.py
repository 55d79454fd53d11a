import sys
from pathlib import Path

# Run the example's tests from a checkout without installing it.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
