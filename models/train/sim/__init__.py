"""The radiograph generators (SYNTHETIC DATA): the physically based
simulator (xraysim) and the first, painted 2D phantom (phantom), the
negatives (negatives), the held-out sets (heldout, tilt), the viewer
screenshots (screenshots) and the realism statistics (realism). A leaf
subpackage: it imports no other subpackage of models/train. Run from
models/train: python3 -m sim.heldout, python3 -m sim.tilt, ..."""
