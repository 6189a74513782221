"""Package data read with :mod:`importlib.resources`: the SoC catalogue (``platforms.ini``) and the
PyTorch reference table (``pytorch_reference.json``), so an installed wheel finds them."""
