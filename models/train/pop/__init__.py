"""The PoP (picture of a picture) screen-photo generators and models:
plane geometry (geometry, a leaf the generators share, so that they import
it and not each other), the composites (composites, variety, scene3d,
plain, rectified), the training arrays (traindata), the trainer (train,
unpack) and the side analysis (sides). Imports sim only. Run from
models/train: python3 -m pop.composites, python3 -m pop.train, ..."""
